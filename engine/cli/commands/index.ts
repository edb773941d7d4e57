import type { Command } from '../command.js';
import { decodeCommand } from './decode.js';
import { engineCommand } from './engine.js';
import { quoteServiceCommand } from './quote-service.js';
import { scannerCommand } from './scanner.js';
import { simCommand } from './sim.js';
import { startCommand } from './start.js';
import { swapCommand } from './swap.js';

/** Every `tidepool` subcommand. Each arrives with its feature. */
export const COMMANDS: readonly Command[] = [decodeCommand, engineCommand, quoteServiceCommand, scannerCommand, simCommand, startCommand, swapCommand];
