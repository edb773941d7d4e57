import { readFile } from 'node:fs/promises';
import { ErrorCode, TpError } from '../errors.js';
import type { CliIo } from './command.js';

/** Reads a file, or standard input when the path is `-`. */
export async function readInput(path: string, io: CliIo): Promise<Buffer> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    return Buffer.concat(chunks);
  }
  try {
    return await readFile(path);
  } catch (err) {
    throw new TpError(ErrorCode.Io, `cannot read ${path}: ${(err as Error).message}`, { cause: err, context: { path } });
  }
}

export const ENCODINGS = ['raw', 'base64', 'hex'] as const;
export type InputEncoding = (typeof ENCODINGS)[number];

/** Turns text input in base64 or hex into bytes; raw input is returned as it is. */
export function decodeBytes(input: Buffer, encoding: string, what: string): Uint8Array {
  if (encoding === 'raw') return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const text = input.toString('utf8').replace(/\s+/g, '');
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new TpError(ErrorCode.Usage, `${what} is not valid base64`);
    return Buffer.from(text, 'base64');
  }
  if (encoding === 'hex') {
    if (!/^([0-9a-fA-F]{2})*$/.test(text)) throw new TpError(ErrorCode.Usage, `${what} is not valid hex`);
    return Buffer.from(text, 'hex');
  }
  throw new TpError(ErrorCode.Usage, `--encoding must be one of ${ENCODINGS.join(', ')}, got ${JSON.stringify(encoding)}`);
}
