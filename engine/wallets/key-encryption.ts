import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

import { ErrorCode, TpError } from '../errors.js';

/**
 * Wallet private keys at rest: AES-256-GCM under a key derived with scrypt from the operator's
 * passphrase, a fresh salt and nonce per key, in a versioned text format:
 *
 *     v1$scrypt$N=32768,r=8,p=1$<salt>$<nonce>$<ciphertext>$<tag>
 *
 * salt 16 bytes, nonce 12 bytes, tag 16 bytes, all base64url without padding. The plaintext is
 * the 32-byte ed25519 seed (the public key follows from it). The wallet's address is the
 * additional authenticated data, so a ciphertext moved to another wallet's row does not open.
 * The scrypt parameters are in the text, so a later version can raise them without breaking
 * stored keys. A wrong passphrase, a damaged text or a swapped row all fail the GCM tag check
 * and are reported as TP_ERR_WALLET_PASSPHRASE; a text that is not in the format is
 * TP_ERR_WALLET_KEY_FORMAT. Nothing here logs or returns a key.
 */

export const KEY_FORMAT_VERSION = 'v1';
const SCRYPT_N = 32_768;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SEED_BYTES = 32;
/** Shortest passphrase accepted to encrypt with. */
export const MIN_PASSPHRASE_LENGTH = 12;
const FORMAT_RE = /^v1\$scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function scrypt(passphrase: Buffer, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(passphrase, salt, 32, options, (err, key) => (err === null ? resolve(key) : reject(err))),
  );
}

function aad(address: string): Buffer {
  return Buffer.from(`tidepool wallet key v1 ${address}`, 'utf8');
}

/** The passphrase the keys are sealed with, held as bytes. */
export class WalletPassphrase {
  private constructor(private readonly bytes: Buffer) {}

  /**
   * From `TIDEPOOL_WALLET_PASSPHRASE`, or the file `keyFile` (its bytes, without a final newline).
   * TP_ERR_WALLET_PASSPHRASE when neither is given or the file cannot be read.
   */
  static resolve(options: { passphrase?: string; keyFile?: string }): WalletPassphrase {
    if (options.keyFile !== undefined && options.keyFile !== '') {
      let bytes: Buffer;
      try {
        statSync(options.keyFile);
        bytes = readFileSync(options.keyFile);
      } catch (err) {
        throw new TpError(ErrorCode.WalletPassphrase, `cannot read the wallet key file ${options.keyFile}: ${(err as Error).message}`, { cause: err });
      }
      let end = bytes.length;
      while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--;
      if (end === 0) throw new TpError(ErrorCode.WalletPassphrase, `the wallet key file ${options.keyFile} is empty`);
      return new WalletPassphrase(Buffer.from(bytes.subarray(0, end)));
    }
    if (options.passphrase !== undefined && options.passphrase !== '') return new WalletPassphrase(Buffer.from(options.passphrase, 'utf8'));
    throw new TpError(
      ErrorCode.WalletPassphrase,
      'no wallet passphrase: set TIDEPOOL_WALLET_PASSPHRASE or give a key file (--key-file, TIDEPOOL_WALLET_KEY_FILE)',
    );
  }

  /** Refuses a passphrase too short to protect new keys. */
  checkStrength(): void {
    if (this.bytes.length < MIN_PASSPHRASE_LENGTH) {
      throw new TpError(ErrorCode.WalletPassphrase, `the wallet passphrase must be at least ${MIN_PASSPHRASE_LENGTH} bytes to encrypt keys with`);
    }
  }

  /** @internal */
  get material(): Buffer {
    return this.bytes;
  }

  /** Never print the passphrase. */
  toJSON(): string {
    return '[redacted]';
  }
}

/** Seals a 32-byte seed for the wallet at `address`. */
export async function encryptSeed(seed: Uint8Array, address: string, passphrase: WalletPassphrase): Promise<string> {
  if (seed.length !== SEED_BYTES) throw new TpError(ErrorCode.WalletKeyFormat, `a wallet seed is ${SEED_BYTES} bytes, got ${seed.length}`);
  const salt = randomBytes(SALT_BYTES);
  const nonce = randomBytes(NONCE_BYTES);
  const key = await scrypt(passphrase.material, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P);
  try {
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(address));
    const ciphertext = Buffer.concat([cipher.update(seed), cipher.final()]);
    const tag = cipher.getAuthTag();
    const b64 = (b: Buffer): string => b.toString('base64url');
    return `${KEY_FORMAT_VERSION}$scrypt$N=${SCRYPT_N},r=${SCRYPT_R},p=${SCRYPT_P}$${b64(salt)}$${b64(nonce)}$${b64(ciphertext)}$${b64(tag)}`;
  } finally {
    key.fill(0);
  }
}

/**
 * Opens a sealed seed. The caller must zero the returned bytes once it has made its signing key.
 * TP_ERR_WALLET_KEY_FORMAT for a text not in the format; TP_ERR_WALLET_PASSPHRASE when it does
 * not open (wrong passphrase, damaged, or another wallet's key).
 */
export async function decryptSeed(sealed: string, address: string, passphrase: WalletPassphrase): Promise<Uint8Array> {
  const m = FORMAT_RE.exec(sealed);
  if (m === null) {
    const version = sealed.split('$', 1)[0];
    const why = version !== KEY_FORMAT_VERSION ? `unknown version ${JSON.stringify(version?.slice(0, 8))}` : 'malformed';
    throw new TpError(ErrorCode.WalletKeyFormat, `the stored key of wallet ${address} is not a tidepool encrypted key (${why})`, { context: { address } });
  }
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const salt = Buffer.from(m[4]!, 'base64url');
  const nonce = Buffer.from(m[5]!, 'base64url');
  const ciphertext = Buffer.from(m[6]!, 'base64url');
  const tag = Buffer.from(m[7]!, 'base64url');
  if (
    n < 2 ||
    (n & (n - 1)) !== 0 ||
    n > 1 << 20 ||
    r < 1 ||
    r > 32 ||
    p < 1 ||
    p > 16 ||
    salt.length !== SALT_BYTES ||
    nonce.length !== NONCE_BYTES ||
    tag.length !== TAG_BYTES ||
    ciphertext.length !== SEED_BYTES
  ) {
    throw new TpError(ErrorCode.WalletKeyFormat, `the stored key of wallet ${address} has invalid parameters`, { context: { address } });
  }
  const key = await scrypt(passphrase.material, salt, n, r, p);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(address));
    decipher.setAuthTag(tag);
    const seed = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    return new Uint8Array(seed.buffer, seed.byteOffset, seed.byteLength);
  } catch (err) {
    throw new TpError(
      ErrorCode.WalletPassphrase,
      `wrong wallet passphrase: the key of wallet ${address} does not open with it (or the stored key was altered)`,
      { cause: err, context: { address } },
    );
  } finally {
    key.fill(0);
  }
}
