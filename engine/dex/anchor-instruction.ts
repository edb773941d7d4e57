import { createHash } from 'node:crypto';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';

/**
 * Anchor's instruction encoding, shared by the three Anchor programs (Raydium CLMM, Orca
 * Whirlpool, Meteora DLMM): an 8-byte discriminator, sha256("global:" + snake_case name)[0..8],
 * then the arguments in Borsh (little-endian integers, bool as one byte, Option as a 0/1 tag, Vec
 * as a u32 length). Optional accounts left out are passed as the program's own id.
 */

export function anchorInstructionDiscriminator(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`global:${name}`).digest().subarray(0, 8));
}

/** Little-endian Borsh writer of a fixed-size buffer. */
export class BorshWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private at = 0;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }

  raw(bytes: Uint8Array): this {
    this.bytes.set(bytes, this.at);
    this.at += bytes.length;
    return this;
  }

  u8(v: number): this {
    this.view.setUint8(this.at, v);
    this.at += 1;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  u32(v: number): this {
    this.view.setUint32(this.at, v, true);
    this.at += 4;
    return this;
  }

  u64(v: bigint): this {
    if (v < 0n || v >= 1n << 64n) throw invalidArgument('u64', v.toString(), `not a u64: ${v}`);
    this.view.setBigUint64(this.at, v, true);
    this.at += 8;
    return this;
  }

  u128(v: bigint): this {
    if (v < 0n || v >= 1n << 128n) throw invalidArgument('u128', v.toString(), `not a u128: ${v}`);
    this.view.setBigUint64(this.at, v & ((1n << 64n) - 1n), true);
    this.view.setBigUint64(this.at + 8, v >> 64n, true);
    this.at += 16;
    return this;
  }

  /** The bytes written; throws unless the buffer was filled exactly. */
  done(): Uint8Array {
    if (this.at !== this.bytes.length) {
      throw new TpError(ErrorCode.Internal, `instruction data: wrote ${this.at} of ${this.bytes.length} bytes`, { context: { written: this.at, size: this.bytes.length } });
    }
    return this.bytes;
  }
}

/** Little-endian Borsh reader; each read returns undefined past the end. */
export class BorshReader {
  private readonly view: DataView;
  at = 0;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.at;
  }

  u8(): number | undefined {
    if (this.remaining < 1) return undefined;
    return this.view.getUint8(this.at++);
  }

  bool(): boolean | undefined {
    const v = this.u8();
    return v === undefined || v > 1 ? undefined : v === 1;
  }

  u32(): number | undefined {
    if (this.remaining < 4) return undefined;
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }

  u64(): bigint | undefined {
    if (this.remaining < 8) return undefined;
    const v = this.view.getBigUint64(this.at, true);
    this.at += 8;
    return v;
  }

  u128(): bigint | undefined {
    if (this.remaining < 16) return undefined;
    const lo = this.view.getBigUint64(this.at, true);
    const hi = this.view.getBigUint64(this.at + 8, true);
    this.at += 16;
    return lo | (hi << 64n);
  }
}

/** Whether `data` starts with `discriminator`. */
export function hasDiscriminator(data: Uint8Array, discriminator: Uint8Array): boolean {
  if (data.length < discriminator.length) return false;
  for (let i = 0; i < discriminator.length; i++) if (data[i] !== discriminator[i]) return false;
  return true;
}

/** Anchor / Whirlpool / DLMM `RemainingAccountsSlice`: which kind of accounts, how many. */
export interface RemainingAccountsSlice {
  accountsType: number;
  length: number;
}
