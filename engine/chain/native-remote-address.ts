/**
 * The peer IPv4 address of a uWebSockets.js response from the add-on (native/remote_address.cc):
 * the same bytes `res.getRemoteAddress()` gives, as a number, without the ArrayBuffer uWS.js
 * allocates per call. Null without the add-on; the caller keeps the uWS.js call as its fallback.
 */
import { nativeAddon } from './native-addon.js';

/** A response's peer IPv4 address as a uint32; -1 when not IPv4, -2 when it cannot tell. */
export type RemoteIPv4Fn = (res: object) => number;

/**
 * Binds the add-on to the uWS.js binary loaded from `uwsBinaryPath` (it must be loaded already)
 * and returns the reader, or null (no add-on, or the binary lacks the function).
 */
export function bindNativeRemoteIPv4(uwsBinaryPath: string): RemoteIPv4Fn | null {
  if (nativeAddon === null) return null;
  return nativeAddon.bindRemoteAddress(uwsBinaryPath) ? nativeAddon.remoteIPv4 : null;
}
