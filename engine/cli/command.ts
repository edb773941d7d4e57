import type { ConfigSchema } from '../config/index.js';

/** A `tidepool` subcommand. Each lives in commands/<name>.ts and is listed in commands/index.ts. */
export interface Command {
  name: string;
  /** One line for `tidepool --help`. */
  summary: string;
  /** Full `tidepool <name> --help` text. */
  help: string;
  /** The settings it reads (flags, environment, config file): docs/configuration.md lists them. */
  settings?: ConfigSchema;
  /** Returns the process exit code. */
  run(argv: string[], io: CliIo): Promise<number>;
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });

/** JSON with bigint written as decimal strings (u64 does not fit a JS number). */
export function toJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), space);
}
