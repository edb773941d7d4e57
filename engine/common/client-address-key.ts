/**
 * The rate-limit key of a client known only by its remote address (rate-limiter.ts: a key the
 * client cannot forge): `addr:` and the address as text. IPv4 keys are kept per address (as an
 * int32), so a known client costs no string building; the cache is bounded (all forgotten when
 * full). Works with anything that reports its remote address as uWebSockets.js does (an
 * HttpResponse, a WebSocket).
 *
 * The address of an IPv4 peer is read through the add-on when it is built
 * (engine/chain/native-remote-address.ts): `getRemoteAddress()` allocates an ArrayBuffer per call,
 * and at 10,000 requests/s sweeping those was the larger part of each scavenge pause once memo
 * entries stopped surviving (engine/quote/memo-entry.ts). The add-on's first answer for each kind
 * of source (HttpResponse, WebSocket) is checked against `getRemoteAddress()`; on a mismatch, or
 * without the add-on, every address is read the uWS.js way.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { bindNativeRemoteIPv4, type RemoteIPv4Fn } from '../chain/index.js';

/** Distinct IPv4 keys kept for reuse (all forgotten when full). */
const MAX_ADDRESS_KEYS = 4096;

/** What uWebSockets.js' HttpResponse and WebSocket offer: the raw address, and its text. */
export interface RemoteAddressSource {
  getRemoteAddress(): ArrayBuffer;
  getRemoteAddressAsText(): ArrayBuffer;
}

/** The add-on's reader: undefined until first asked, null when there is none or it disagreed with uWS.js. */
let nativeReader: RemoteIPv4Fn | null | undefined;
/**
 * The kinds of source (their prototypes: uWS.js' HttpResponse, its WebSocket) whose first native
 * answer agreed with uWS.js: each kind keeps its native pointer in its own object, so each is
 * checked once.
 */
const checkedKinds = new WeakSet<object>();
/** Whether any kind was checked (and agreed). */
let checkedAny = false;

/** Whether remote addresses are read through the add-on (true once a first answer agreed with uWS.js). */
export function remoteAddressesReadNatively(): boolean {
  return nativeReader !== undefined && nativeReader !== null && checkedAny;
}

/**
 * The add-on's reader, bound on first use to the uWS.js binary of this process (first use is in a
 * uWS handler, so the binary is loaded; the add-on only looks it up).
 */
function nativeRemoteIPv4(): RemoteIPv4Fn | null {
  if (nativeReader === undefined) {
    try {
      const main = createRequire(import.meta.url).resolve('@trufflesuite/uws-js-unofficial');
      const binary = join(dirname(main), '..', 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
      nativeReader = bindNativeRemoteIPv4(binary);
    } catch {
      nativeReader = null;
    }
  }
  return nativeReader;
}

/** uWS.js' raw address as an int32 (first byte most significant) when it is IPv4, else undefined. */
function ipv4Of(raw: ArrayBuffer): number | undefined {
  if (raw.byteLength !== 4) return undefined;
  const b = new Uint8Array(raw);
  return (b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!;
}

export class ClientAddressKeys {
  private readonly keys = new Map<number, string>();

  /** The key of the source's remote address. */
  of(source: RemoteAddressSource): string {
    const native = nativeRemoteIPv4();
    if (native !== null) {
      const ip = native(source);
      if (ip >= 0 && (checkedKinds.has(Object.getPrototypeOf(source) as object) || this.agrees(ip, source))) return this.keyOf(ip | 0);
    }
    const ip = ipv4Of(source.getRemoteAddress());
    return ip === undefined ? `addr:${Buffer.from(source.getRemoteAddressAsText()).toString()}` : this.keyOf(ip);
  }

  /** The key of IPv4 address `ip` (an int32, first byte most significant). */
  private keyOf(ip: number): string {
    let key = this.keys.get(ip);
    if (key === undefined) {
      key = `addr:${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
      if (this.keys.size >= MAX_ADDRESS_KEYS) this.keys.clear();
      this.keys.set(ip, key);
    }
    return key;
  }

  /** A kind's first native answer against uWS.js' own; a disagreement turns the add-on off for the process. */
  private agrees(ip: number, source: RemoteAddressSource): boolean {
    const same = ipv4Of(source.getRemoteAddress()) === (ip | 0);
    if (same) {
      checkedKinds.add(Object.getPrototypeOf(source) as object);
      checkedAny = true;
    } else {
      nativeReader = null;
    }
    return same;
  }
}
