#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2
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
      io.stderr.write(`tidepool ${name}: ${err.message} [${err.code}]\n`);
      return err.code === ErrorCode.Usage ? 2 : 1;
    }
    throw err;
  }
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
      process.stderr.write(`tidepool: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
