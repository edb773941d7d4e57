/**
 * The address of a gRPC upstream (the aggregator's local and external quote services):
 * `host:port`, or with a scheme that says how to reach it, as grpc-js and the grpcurl family write
 * gRPC URIs: `https://` or `grpcs://` TLS, `http://` or `grpc://` plaintext. Without a scheme the
 * service's `tls.upstream` decides (server-tls-settings.ts).
 */

const TLS_SCHEMES = new Set(['https', 'grpcs']);
const PLAIN_SCHEMES = new Set(['http', 'grpc']);

/** `[scheme://]host:port[/]`: host a name, IPv4 or bracketed IPv6; the scheme one of the four above. */
const UPSTREAM_ADDRESS = /^(?:([a-z]+):\/\/)?((?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5}))\/?$/;

/** An upstream address split: its `host:port` and whether its scheme asks for TLS (undefined: no scheme). */
export interface UpstreamAddress {
  hostPort: string;
  tls: boolean | undefined;
}

/** Splits an upstream address, or returns the reason it is not one (for the setting parser). */
export function parseUpstreamAddress(raw: string): UpstreamAddress | string {
  const m = UPSTREAM_ADDRESS.exec(raw);
  if (m === null) return 'expected host:port, or https:// / grpcs:// (TLS) or http:// / grpc:// (plaintext) before it';
  if (Number(m[3]) > 65535) return 'port out of range';
  const scheme = m[1];
  if (scheme === undefined) return { hostPort: m[2]!, tls: undefined };
  if (TLS_SCHEMES.has(scheme)) return { hostPort: m[2]!, tls: true };
  if (PLAIN_SCHEMES.has(scheme)) return { hostPort: m[2]!, tls: false };
  return `scheme ${scheme}:// is not one of https, grpcs (TLS), http, grpc (plaintext)`;
}
