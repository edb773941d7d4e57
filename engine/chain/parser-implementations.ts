/**
 * Every entry parser this build can run, for tests and benchmarks that race or cross-check them.
 * All implement parse-layout.ts's ParseEntriesFn and must agree byte for byte on every input.
 */
import { parseEntriesInto } from './entry-parser.js';
import type { ParseEntriesFn } from './parse-layout.js';

export interface ParserImplementation {
  name: string;
  parse: ParseEntriesFn;
}

export function availableParsers(): ParserImplementation[] {
  return [{ name: 'typescript', parse: parseEntriesInto }];
}
