#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --no-parallel-scavenge
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isTpError, ErrorCode } from '../errors.js';
import { type CliIo, type Command, processIo } from './command.js';
import { COMMANDS } from './commands/index.js';

/** `tidepool <command> [options]`: one program, one subcommand per feature. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c: Command) => c.name === name);
  if (command === undefined) {
    io.stderr.write(`tidepool: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.help.trimEnd()}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (isTpError(err)) {
      // One line a person reads; the stack only when asked for (LOG_LEVEL=debug).
      io.stderr.write(`tidepool ${name}: ${err.message} [${err.code}]\n`);
      if (debugRequested(io.env)) io.stderr.write(`${err.stack ?? ''}\n`);
      return err.code === ErrorCode.Usage ? 2 : 1;
    }
    throw err;
  }
}

/** LOG_LEVEL=debug (or trace): failures print their stack too. */
function debugRequested(env: Readonly<Record<string, string | undefined>>): boolean {
  const level = env.LOG_LEVEL?.toLowerCase();
  return level === 'debug' || level === 'trace';
}

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: tidepool <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun 'tidepool <command> --help' for a command's options.\n`;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

// Run when executed directly (the package bin, through its symlink too), not when imported by tests.
if (isEntryPoint()) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const line = err instanceof Error ? err.message.replace(/\s*\n\s*/g, '; ') : String(err);
      process.stderr.write(`tidepool: ${line}${debugRequested(process.env) ? `\n${(err as Error).stack ?? ''}` : ' (LOG_LEVEL=debug prints the stack)'}\n`);
      process.exitCode = 1;
    },
  );
}
