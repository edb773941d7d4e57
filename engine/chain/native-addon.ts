/**
 * The one loader of the C++ add-on (native/, binding.gyp -> build/Release/tidepool_native.node).
 * native-parser.ts and native-base58.ts build their same-signature native/TypeScript pairs on the
 * module loaded here. Loading never throws: a missing, disabled, stale or broken add-on leaves
 * `nativeAddon` null and says why in `nativeStatus`.
 *
 * Environment, read once at import:
 * - TIDEPOOL_NATIVE=0         never load the add-on.
 * - TIDEPOOL_NATIVE_PATH=file load the add-on from this file instead of build/Release.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ParseEntriesFn, ParseStatus } from './parse-layout.js';

export interface NativeStatus {
  readonly loaded: boolean;
  /** Why the add-on is not used (absent, disabled, failed to load); undefined when loaded. */
  readonly reason?: string;
  /** The file that was loaded or tried last. */
  readonly path?: string;
}

/** The exports of native/addon.cc (its header comment is the contract). */
export interface NativeAddon {
  abi: number;
  /** Self-contained ParseEntriesFn (reads all five arrays every call). */
  parseEntries: ParseEntriesFn;
  bindOutputs(entries: Uint32Array, txs: Uint32Array, programs: Uint8Array, counts: Uint32Array): void;
  parseBound(bytes: Uint8Array): ParseStatus;
  /** encodeBase58 of base58-encode.ts: same defaults; a RangeError for a bad range (the TypeScript one throws TpError). */
  encodeBase58(bytes: Uint8Array, start?: number, end?: number): string;
  /** Finds us_socket_remote_address in the uWebSockets.js binary loaded from this path (native/remote_address.cc). */
  bindRemoteAddress(uwsBinaryPath: string): boolean;
  /** A uWS.js response's peer IPv4 address as a uint32; -1 not IPv4, -2 not a native response or not bound. */
  remoteIPv4(res: object): number;
  /** glibc malloc_trim(0): the C heap's free pages back to the kernel; whether any were (native/malloc_trim.cc). */
  trimMalloc(): boolean;
}

/** Bumped with native/addon.cc whenever the exported functions change. */
const NATIVE_ABI = 5;
const ADDON_FILE = 'tidepool_native.node';
const FUNCTIONS = ['parseEntries', 'bindOutputs', 'parseBound', 'encodeBase58', 'bindRemoteAddress', 'remoteIPv4', 'trimMalloc'] as const;

// From engine/chain/ (sources run by vitest) and from dist/engine/chain/ (the build).
function candidatePaths(): string[] {
  const override = process.env.TIDEPOOL_NATIVE_PATH;
  if (override !== undefined && override !== '') return [override];
  return [`../../build/Release/${ADDON_FILE}`, `../../../build/Release/${ADDON_FILE}`].map((rel) =>
    fileURLToPath(new URL(rel, import.meta.url)),
  );
}

function load(): { addon: NativeAddon | null; status: NativeStatus } {
  if (process.env.TIDEPOOL_NATIVE === '0') {
    return { addon: null, status: { loaded: false, reason: 'disabled by TIDEPOOL_NATIVE=0' } };
  }
  const paths = candidatePaths();
  const path = paths.find((p) => existsSync(p));
  if (path === undefined) {
    return {
      addon: null,
      status: { loaded: false, reason: `add-on not built (${paths.join(', ')} missing)`, path: paths[0] },
    };
  }
  try {
    const mod = createRequire(import.meta.url)(path) as Partial<NativeAddon>;
    if (mod.abi !== NATIVE_ABI || FUNCTIONS.some((name) => typeof mod[name] !== 'function')) {
      return {
        addon: null,
        status: { loaded: false, reason: `add-on ABI ${String(mod.abi)}, expected ${NATIVE_ABI}: rebuild it`, path },
      };
    }
    return { addon: mod as NativeAddon, status: { loaded: true, path } };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { addon: null, status: { loaded: false, reason: `add-on failed to load: ${message}`, path } };
  }
}

const loaded = load();

/** Whether the add-on is in use, and if not, why. */
export const nativeStatus: NativeStatus = Object.freeze(loaded.status);

/** The add-on's exports, or null. Internal to engine/chain: use native-parser.ts, native-base58.ts and native-remote-address.ts. */
export const nativeAddon: NativeAddon | null = loaded.addon;
