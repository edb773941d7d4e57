/**
 * Every entry parser this build can run, for tests and benchmarks that race or cross-check them.
 * All implement parse-layout.ts's ParseEntriesFn and must agree byte for byte on every input.
 */
import { parseEntriesInto } from './entry-parser.js';
import { nativeParseEntries } from './native-parser.js';
import type { ParseEntriesFn } from './parse-layout.js';

export interface ParserImplementation {
  name: string;
  parse: ParseEntriesFn;
}

/** The TypeScript parser first (the reference), then the C++ one when the add-on loaded. */
export function availableParsers(): ParserImplementation[] {
  const parsers: ParserImplementation[] = [{ name: 'typescript', parse: parseEntriesInto }];
  if (nativeParseEntries !== null) parsers.push({ name: 'native', parse: nativeParseEntries });
  return parsers;
}
