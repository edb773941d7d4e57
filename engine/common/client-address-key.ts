/**
 * The rate-limit key of a client known only by its remote address (rate-limiter.ts: a key the
 * client cannot forge): `addr:` and the address as text. IPv4 keys are kept per address (as an
 * int32), so a known client costs no string building; the cache is bounded (all forgotten when
 * full). Works with anything that reports its remote address as uWebSockets.js does (an
 * HttpResponse, a WebSocket).
 */

/** Distinct IPv4 keys kept for reuse (all forgotten when full). */
const MAX_ADDRESS_KEYS = 4096;

/** What uWebSockets.js' HttpResponse and WebSocket offer: the raw address, and its text. */
export interface RemoteAddressSource {
  getRemoteAddress(): ArrayBuffer;
  getRemoteAddressAsText(): ArrayBuffer;
}

export class ClientAddressKeys {
  private readonly keys = new Map<number, string>();

  /** The key of the source's remote address. */
  of(source: RemoteAddressSource): string {
    const raw = source.getRemoteAddress();
    if (raw.byteLength !== 4) return `addr:${Buffer.from(source.getRemoteAddressAsText()).toString()}`;
    const b = new Uint8Array(raw);
    const ip = (b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!;
    let key = this.keys.get(ip);
    if (key === undefined) {
      key = `addr:${b[0]!}.${b[1]!}.${b[2]!}.${b[3]!}`;
      if (this.keys.size >= MAX_ADDRESS_KEYS) this.keys.clear();
      this.keys.set(ip, key);
    }
    return key;
  }
}
