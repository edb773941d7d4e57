/**
 * The one loader of the C++ add-on (native/, binding.gyp -> build/Release/tidepool_native.node).
 *
 * `parseEntries` is the parser the rest of the engine should call: the native one when it loaded,
 * else the TypeScript one, with the same signature and the same results (ParseEntriesFn in
 * parse-layout.ts; native-parser.test.ts checks both on the same vectors). Loading never throws:
 * a missing or broken add-on leaves `nativeParseEntries` null and says why in `nativeStatus`.
 *
 * Environment, read once at import:
 * - TIDEPOOL_NATIVE=0         never load the add-on.
 * - TIDEPOOL_NATIVE_PATH=file load the add-on from this file instead of build/Release.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseEntriesInto } from './entry-parser.js';
import type { ParseEntriesFn, ParseStatus } from './parse-layout.js';

export interface NativeStatus {
  readonly loaded: boolean;
  /** Why the add-on is not used (absent, disabled, failed to load); undefined when loaded. */
  readonly reason?: string;
  /** The file that was loaded or tried last. */
  readonly path?: string;
}

/** Bumped with native/addon.cc whenever the exported functions change. */
const NATIVE_ABI = 2;
const ADDON_FILE = 'tidepool_native.node';

interface NativeModule {
  abi: number;
  /** Self-contained ParseEntriesFn (reads all five arrays every call). */
  parseEntries: ParseEntriesFn;
  bindOutputs(entries: Uint32Array, txs: Uint32Array, programs: Uint8Array, counts: Uint32Array): void;
  parseBound(bytes: Uint8Array): ParseStatus;
}

/**
 * ParseEntriesFn over the add-on's bound-output path. Fetching a typed array's pointer through
 * Node-API costs about as much as parsing a small transaction, and callers reuse their output
 * arrays (EntryBatchIndex), so the arrays are bound once and re-bound only when one of them is a
 * different object or has a different length (a detached or shrunk buffer reports a new length).
 */
function boundParser(mod: NativeModule): ParseEntriesFn {
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

// From engine/chain/ (sources run by vitest) and from dist/engine/chain/ (the build).
function candidatePaths(): string[] {
  const override = process.env.TIDEPOOL_NATIVE_PATH;
  if (override !== undefined && override !== '') return [override];
  return [`../../build/Release/${ADDON_FILE}`, `../../../build/Release/${ADDON_FILE}`].map((rel) =>
    fileURLToPath(new URL(rel, import.meta.url)),
  );
}

function load(): { fn: ParseEntriesFn | null; status: NativeStatus } {
  if (process.env.TIDEPOOL_NATIVE === '0') {
    return { fn: null, status: { loaded: false, reason: 'disabled by TIDEPOOL_NATIVE=0' } };
  }
  const paths = candidatePaths();
  const path = paths.find((p) => existsSync(p));
  if (path === undefined) {
    return {
      fn: null,
      status: { loaded: false, reason: `add-on not built (${paths.join(', ')} missing)`, path: paths[0] },
    };
  }
  try {
    const mod = createRequire(import.meta.url)(path) as Partial<NativeModule>;
    if (mod.abi !== NATIVE_ABI || typeof mod.bindOutputs !== 'function' || typeof mod.parseBound !== 'function') {
      return {
        fn: null,
        status: { loaded: false, reason: `add-on ABI ${String(mod.abi)}, expected ${NATIVE_ABI}: rebuild it`, path },
      };
    }
    return { fn: boundParser(mod as NativeModule), status: { loaded: true, path } };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { fn: null, status: { loaded: false, reason: `add-on failed to load: ${message}`, path } };
  }
}

const loaded = load();

/** Whether the add-on is in use, and if not, why. */
export const nativeStatus: NativeStatus = Object.freeze(loaded.status);

/**
 * The C++ parser, or null. Throws a TypeError only when an argument is not the expected typed
 * array (Buffer counts as a Uint8Array). Keeps a reference to the last output arrays it was given.
 */
export const nativeParseEntries: ParseEntriesFn | null = loaded.fn;

/** The TypeScript parser, always available. */
export const tsParseEntries: ParseEntriesFn = parseEntriesInto;

/** The fastest parser available: native when loaded, else TypeScript. */
export const parseEntries: ParseEntriesFn = nativeParseEntries ?? parseEntriesInto;
