import { readFileSync } from 'node:fs';

import { base58, keypairFromSeed, type Keypair } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';

/**
 * Solana keypairs as the Solana CLI writes them (`solana-keygen new -o id.json`): a JSON array of
 * the 64 bytes `seed ‖ public key`; and the same 64 bytes in base58 (88 characters at most) as
 * configs and wallets export them. A keypair is accepted only when its public half is the key its
 * seed derives (a file that was edited or mixed up is refused, never imported with a wrong address).
 */

export const SECRET_KEY_BYTES = 64;

/** Checks the 64 bytes; the keypair (the caller zeroes `bytes` when done). TP_ERR_WALLET_KEY_FORMAT. */
export function keypairFromSecretKey(bytes: Uint8Array, what: string): Keypair {
  if (bytes.length !== SECRET_KEY_BYTES) {
    throw new TpError(ErrorCode.WalletKeyFormat, `${what}: a Solana secret key is ${SECRET_KEY_BYTES} bytes, got ${bytes.length}`);
  }
  const keypair = keypairFromSeed(bytes.subarray(0, 32));
  const stated = bytes.subarray(32, 64);
  for (let i = 0; i < 32; i++) {
    if (keypair.publicKey[i] !== stated[i]) {
      throw new TpError(
        ErrorCode.WalletKeyFormat,
        `${what}: its public half (${base58.encode(stated)}) is not the key its secret derives (${keypair.address})`,
      );
    }
  }
  return keypair;
}

/** Reads a Solana CLI keypair file. TP_ERR_WALLET_KEY_FORMAT naming what is wrong; TP_ERR_IO when unreadable. */
export function readKeypairFile(path: string): Keypair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TpError(ErrorCode.Io, `cannot read keypair file ${path}: ${(err as Error).message}`, { cause: err, context: { path } });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TpError(ErrorCode.WalletKeyFormat, `keypair file ${path} is not JSON (expected the Solana CLI format: an array of 64 numbers)`);
  }
  if (!Array.isArray(json)) throw new TpError(ErrorCode.WalletKeyFormat, `keypair file ${path} must hold a JSON array of 64 numbers`);
  const bytes = new Uint8Array(json.length);
  for (let i = 0; i < json.length; i++) {
    const v: unknown = json[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) {
      throw new TpError(ErrorCode.WalletKeyFormat, `keypair file ${path}: item ${i} is not a byte (0-255)`);
    }
    bytes[i] = v;
  }
  try {
    return keypairFromSecretKey(bytes, `keypair file ${path}`);
  } finally {
    bytes.fill(0);
  }
}

/** A base58 secret key (64 bytes, as `treasureWallet` holds it). TP_ERR_WALLET_KEY_FORMAT. */
export function keypairFromBase58(text: string, what: string): Keypair {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text);
  } catch {
    throw new TpError(ErrorCode.WalletKeyFormat, `${what} is not base58`);
  }
  try {
    return keypairFromSecretKey(bytes, what);
  } finally {
    bytes.fill(0);
  }
}

/** The 64-byte secret key of a keypair (seed ‖ public key). */
export function secretKeyBytes(keypair: Keypair, seed: Uint8Array): Uint8Array {
  const out = new Uint8Array(SECRET_KEY_BYTES);
  out.set(seed, 0);
  out.set(keypair.publicKey, 32);
  return out;
}
