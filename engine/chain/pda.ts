import { createHash } from 'node:crypto';

import { invalidArgument } from '../errors.js';
import * as base58 from './base58.js';

/**
 * Program derived addresses (docs/wire-formats.md §0): sha256(seeds ‖ bump ‖ program_id ‖
 * "ProgramDerivedAddress"), bump tried from 255 down, the first result that is not an ed25519
 * point wins. The simulator derives the accounts clients derive themselves this way (tick arrays,
 * bin arrays, AmmConfig, associated token accounts), and the engine derives the same addresses to
 * read them (engine/dex/pool-accounts.ts), so a client that computes the address finds the account.
 */

const PDA_MARKER = Buffer.from('ProgramDerivedAddress');
const MAX_SEEDS = 16;
const MAX_SEED_BYTES = 32;

// Curve25519 field: p = 2^255 - 19; the Edwards curve -x^2 + y^2 = 1 + d x^2 y^2.
const P = (1n << 255n) - 19n;
const D = mod(-121665n * modPow(121666n, P - 2n));
const HALF_P_MINUS_1 = (P - 1n) / 2n;

function mod(a: bigint): bigint {
  const r = a % P;
  return r < 0n ? r + P : r;
}

function modPow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if ((e & 1n) === 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

/**
 * Whether 32 bytes decompress to a point of the ed25519 curve, as curve25519-dalek's
 * `CompressedEdwardsY::decompress` decides (the check Solana's `bytes_are_curve_point` makes):
 * with y the low 255 bits, x^2 = (y^2 - 1) / (d y^2 + 1) must have a square root. The sign bit
 * never makes a point invalid, and d y^2 + 1 is never 0 (-1/d is not a square).
 */
export function isOnCurve(bytes: Uint8Array): boolean {
  // The curve check is a 255-bit modular exponentiation (~0.1 ms); the same addresses are derived
  // again and again (a wallet's token accounts for every trade, a pool's authority for every swap),
  // so its answers are kept (issue 23: it was a tenth of the executor bench's CPU).
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let known = curveAnswers.get(key);
  if (known === undefined) {
    known = computeOnCurve(bytes);
    if (curveAnswers.size >= CURVE_ANSWERS_MAX) curveAnswers.clear();
    curveAnswers.set(key, known);
  }
  return known;
}

/** Answers of `isOnCurve` kept, at most this many (then forgotten at once: a bounded, cheap memo). */
const CURVE_ANSWERS_MAX = 65_536;
const curveAnswers = new Map<string, boolean>();

function computeOnCurve(bytes: Uint8Array): boolean {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(bytes[i]!);
  y = mod(y & ((1n << 255n) - 1n));
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  // u/v is a square iff u·v is (Legendre symbol of v^-1 equals that of v).
  const uv = (u * v) % P;
  return uv === 0n || modPow(uv, HALF_P_MINUS_1) === 1n;
}

export type Seed = Uint8Array | string;

function seedBytes(seed: Seed): Uint8Array {
  return typeof seed === 'string' ? Buffer.from(seed, 'utf8') : seed;
}

/** `create_program_address`: undefined when the hash lands on the curve. */
export function createProgramAddress(seeds: readonly Seed[], programId: string): Uint8Array | undefined {
  if (seeds.length > MAX_SEEDS) throw invalidArgument('seeds', seeds.length, `at most ${MAX_SEEDS} seeds, got ${seeds.length}`);
  const hash = createHash('sha256');
  for (const seed of seeds) {
    const bytes = seedBytes(seed);
    if (bytes.length > MAX_SEED_BYTES) throw invalidArgument('seed', bytes.length, `a seed holds at most ${MAX_SEED_BYTES} bytes, got ${bytes.length}`);
    hash.update(bytes);
  }
  const digest = new Uint8Array(hash.update(base58.decodePubkey(programId)).update(PDA_MARKER).digest());
  return isOnCurve(digest) ? undefined : digest;
}

/** `find_program_address`: the address (base58) and its bump. */
export function findProgramAddress(seeds: readonly Seed[], programId: string): { address: string; bump: number } {
  const bump = new Uint8Array(1);
  for (let b = 255; b >= 0; b--) {
    bump[0] = b;
    const key = createProgramAddress([...seeds, bump], programId);
    if (key !== undefined) return { address: base58.encode(key), bump: b };
  }
  throw invalidArgument('seeds', seeds.length, `no viable bump seed for program ${programId}`);
}
