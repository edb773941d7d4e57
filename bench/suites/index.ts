import type { Suite } from '../harness.js';
import { base58Suite } from './base58.js';
import { busSuite } from './bus.js';
import { aggregatorSuite } from './aggregator.js';
import { e2eSuite } from './e2e.js';
import { executorSuite } from './executor.js';
import { parseSuite } from './parse.js';
import { plannerSuite } from './planner.js';
import { quoteSuite } from './quote.js';
import { quoteStreamsSuite } from './quote-streams.js';
import { rpcProxySuite } from './rpc-proxy.js';
import { scannerSuite } from './scanner.js';

/** Every benchmark suite, in the order `npm run bench` runs them. */
export const SUITES: readonly Suite[] = [parseSuite, base58Suite, scannerSuite, quoteSuite, quoteStreamsSuite, e2eSuite, busSuite, aggregatorSuite, rpcProxySuite, plannerSuite, executorSuite];
