import type { Command } from '../command.js';
import { aggregatedQuoteCommand } from './aggregated-quote.js';
import { aggregatorCommand } from './aggregator.js';
import { backtestCommand } from './backtest.js';
import { consoleCommand } from './console.js';
import { decodeCommand } from './decode.js';
import { engineCommand } from './engine.js';
import { executorCommand } from './executor.js';
import { externalQuotesCommand } from './external-quotes.js';
import { marketScannerCommand } from './market-scanner.js';
import { migrateCommand } from './migrate.js';
import { plannerCommand } from './planner.js';
import { signalSourceCommand } from './signal-source.js';
import { poolsCommand } from './pools.js';
import { quoteServiceCommand } from './quote-service.js';
import { rpcProxyCommand } from './rpc-proxy.js';
import { scannerCommand } from './scanner.js';
import { simCommand } from './sim.js';
import { startCommand } from './start.js';
import { strategiesCommand } from './strategies.js';
import { swapCommand } from './swap.js';
import { validateConfigCommand } from './validate-config.js';
import { walletsCommand } from './wallets.js';

/** Every `tidepool` subcommand. Each arrives with its feature. */
export const COMMANDS: readonly Command[] = [
  aggregatedQuoteCommand,
  aggregatorCommand,
  backtestCommand,
  consoleCommand,
  decodeCommand,
  engineCommand,
  executorCommand,
  externalQuotesCommand,
  marketScannerCommand,
  migrateCommand,
  plannerCommand,
  poolsCommand,
  quoteServiceCommand,
  rpcProxyCommand,
  scannerCommand,
  signalSourceCommand,
  simCommand,
  startCommand,
  strategiesCommand,
  swapCommand,
  validateConfigCommand,
  walletsCommand,
];
