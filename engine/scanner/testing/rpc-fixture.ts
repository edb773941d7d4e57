import type { AccountRecord } from '../../sim/chain-backend.js';
import { startTestServers, type TestServers } from '../../sim/rpc/testing/test-servers.js';
import { decodePubkey, encode } from '../../chain/base58.js';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID } from '../../chain/index.js';

/** Test support for the scanner's RPC client, fetcher and lookup tables: the simulator's JSON-RPC over a MemoryBackend. */

export interface RpcFixture extends TestServers {
  /** POST bodies the HTTP server answered (one per HTTP call). */
  posts: string[];
}

export async function startRpcFixture(): Promise<RpcFixture> {
  const servers = await startTestServers();
  const posts: string[] = [];
  const http = servers.http as unknown as { answer(res: unknown, bytes: Buffer): void };
  const answer = http.answer.bind(http);
  http.answer = (res: unknown, bytes: Buffer): void => {
    posts.push(bytes.toString('utf8'));
    answer(res, bytes);
  };
  return Object.assign(servers, { posts });
}

/** A distinct valid address per n (n < 2^32): 28 bytes of `fill`, then n big-endian. */
export function testAddress(n: number, fill = 0x33): string {
  const b = new Uint8Array(32).fill(fill);
  new DataView(b.buffer).setUint32(28, n);
  return encode(b);
}

export interface LookupTableInput {
  addresses: readonly string[];
  deactivationSlot?: bigint;
  lastExtendedSlot?: bigint;
  authority?: string | null;
  stateTag?: number;
}

/** Lookup table account bytes (bincode, addresses from offset 56). */
export function encodeLookupTable(input: LookupTableInput): Uint8Array {
  const data = new Uint8Array(56 + input.addresses.length * 32);
  const view = new DataView(data.buffer);
  view.setUint32(0, input.stateTag ?? 1, true);
  view.setBigUint64(4, input.deactivationSlot ?? 0xffff_ffff_ffff_ffffn, true);
  view.setBigUint64(12, input.lastExtendedSlot ?? 0n, true);
  data[20] = 0;
  if (input.authority !== undefined && input.authority !== null) {
    data[21] = 1;
    data.set(decodeKey(input.authority), 22);
  }
  input.addresses.forEach((a, i) => data.set(decodeKey(a), 56 + i * 32));
  return data;
}

function decodeKey(a: string): Uint8Array {
  return decodePubkey(a);
}

export function lookupTableAccount(input: LookupTableInput, owner = ADDRESS_LOOKUP_TABLE_PROGRAM_ID): AccountRecord {
  return { lamports: 1_000_000n, owner, data: encodeLookupTable(input), executable: false, rentEpoch: 18_446_744_073_709_551_615n };
}

export function dataAccount(data: Uint8Array, lamports = 1_000_000n, owner = testAddress(0, 9)): AccountRecord {
  return { lamports, owner, data, executable: false, rentEpoch: 18_446_744_073_709_551_615n };
}
