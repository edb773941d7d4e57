import { isIP } from 'node:net';
import { ErrorCode, TpError } from '../../errors.js';

/**
 * `shredstream.Shredstream/SendHeartbeat` as the block engine checks it: the shred destination's
 * ip must be the caller's own IP, the port a UDP port, at most two regions.
 */

/** The block engine uses at most two regions per heartbeat. */
export const MAX_HEARTBEAT_REGIONS = 2;
const MAX_REGION_LENGTH = 64;

/** The decoded request, as proto-loader gives it with PROTO_LOADER_OPTIONS (int64 as string). */
export interface HeartbeatRequest {
  socket?: { ip?: unknown; port?: unknown } | null;
  regions?: unknown;
}

export interface HeartbeatRecord {
  /** The shred destination. */
  ip: string;
  port: number;
  regions: string[];
  /** `ip:port` of the gRPC caller as the server saw it. */
  peer: string;
  receivedAtMs: number;
  count: number;
}

export class HeartbeatInvalid extends TpError<typeof ErrorCode.BadParameter> {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(ErrorCode.BadParameter, message, { context: { parameter: field } });
  }
}

/** The caller's IP from grpc-js `getPeer()` (`1.2.3.4:5`, `::1:5` or `[::1]:5`), IPv4-mapped addresses unwrapped. */
export function peerIp(peer: string): string | undefined {
  const colon = peer.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let host = peer.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return isIP(host) === 0 ? undefined : normalizeIp(host);
}

function normalizeIp(ip: string): string {
  const lower = ip.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}

/**
 * Checks one heartbeat. `callerIp` undefined skips the caller check (peer unknown).
 * Throws HeartbeatInvalid naming the offending field.
 */
export function validateHeartbeat(
  request: HeartbeatRequest,
  callerIp: string | undefined,
): { ip: string; port: number; regions: string[] } {
  const socket = request.socket;
  if (socket === null || socket === undefined) throw new HeartbeatInvalid('socket', 'socket is required');
  const ip = socket.ip;
  if (typeof ip !== 'string' || isIP(ip) === 0) {
    throw new HeartbeatInvalid('socket.ip', `socket.ip must be an IP address, got ${JSON.stringify(ip)}`);
  }
  if (callerIp !== undefined && normalizeIp(ip) !== callerIp) {
    throw new HeartbeatInvalid('socket.ip', `socket.ip ${ip} must equal the caller's IP ${callerIp}`);
  }
  const port = typeof socket.port === 'string' ? Number(socket.port) : socket.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new HeartbeatInvalid('socket.port', `socket.port must be in 1..65535, got ${String(socket.port)}`);
  }
  const regions = request.regions ?? [];
  if (!Array.isArray(regions)) throw new HeartbeatInvalid('regions', 'regions must be a list of names');
  if (regions.length > MAX_HEARTBEAT_REGIONS) {
    throw new HeartbeatInvalid('regions', `regions: at most ${MAX_HEARTBEAT_REGIONS} names, got ${regions.length}`);
  }
  for (const [i, region] of regions.entries()) {
    if (typeof region !== 'string' || region.length === 0 || region.length > MAX_REGION_LENGTH) {
      throw new HeartbeatInvalid(`regions[${i}]`, `regions[${i}] must be a region name such as "amsterdam"`);
    }
  }
  return { ip: normalizeIp(ip), port, regions: regions as string[] };
}
