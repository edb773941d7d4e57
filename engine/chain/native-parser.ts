/**
 * The entry parser the rest of the engine should call: `parseEntries` is the C++ one when the add-on
 * loaded (native-addon.ts, the one loader, with its TIDEPOOL_NATIVE and TIDEPOOL_NATIVE_PATH
 * switches), else the TypeScript one, with the same signature and the same results
 * (ParseEntriesFn in parse-layout.ts; native-parser.test.ts checks both on the same vectors).
 * Importing never throws: without the add-on `nativeParseEntries` is null and `nativeStatus` says why.
 */
import { parseEntriesInto } from './entry-parser.js';
import { nativeAddon, nativeStatus, type NativeAddon, type NativeStatus } from './native-addon.js';
import type { ParseEntriesFn } from './parse-layout.js';

export { nativeStatus, type NativeStatus };

/**
 * ParseEntriesFn over the add-on's bound-output path. Fetching a typed array's pointer through
 * Node-API costs about as much as parsing a small transaction, and callers reuse their output
 * arrays (EntryBatchIndex), so the arrays are bound once and re-bound only when one of them is a
 * different object or has a different length (a detached or shrunk buffer reports a new length).
 */
function boundParser(mod: NativeAddon): ParseEntriesFn {
  const { bindOutputs, parseBound } = mod;
  let e: Uint32Array | null = null;
  let t: Uint32Array | null = null;
  let p: Uint8Array | null = null;
  let c: Uint32Array | null = null;
  let el = -1;
  let tl = -1;
  let pl = -1;
  let cl = -1;
  return function nativeParseEntries(bytes, entries, txs, programs, counts) {
    if (
      entries !== e ||
      txs !== t ||
      programs !== p ||
      counts !== c ||
      entries.length !== el ||
      txs.length !== tl ||
      programs.length !== pl ||
      counts.length !== cl
    ) {
      bindOutputs(entries, txs, programs, counts); // TypeError on a wrong type, binding unchanged
      e = entries;
      t = txs;
      p = programs;
      c = counts;
      el = entries.length;
      tl = txs.length;
      pl = programs.length;
      cl = counts.length;
    }
    return parseBound(bytes);
  };
}

/**
 * The C++ parser, or null. Throws a TypeError only when an argument is not the expected typed
 * array (Buffer counts as a Uint8Array). Keeps a reference to the last output arrays it was given.
 */
export const nativeParseEntries: ParseEntriesFn | null = nativeAddon === null ? null : boundParser(nativeAddon);

/** The TypeScript parser, always available. */
export const tsParseEntries: ParseEntriesFn = parseEntriesInto;

/** The fastest parser available: native when loaded, else TypeScript. */
export const parseEntries: ParseEntriesFn = nativeParseEntries ?? parseEntriesInto;
