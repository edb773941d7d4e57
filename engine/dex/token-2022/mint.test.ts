/**
 * Mint and token-account layouts against the token program's own test vectors (token-2022
 * interface/src/extension/mod.rs, state.rs) and against @solana/spl-token's layouts and decoders,
 * both ways; damaged bytes are TpErrors, never a throw from deep inside.
 */
import {
  ExtensionType as SplExtensionType,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID as SPL_TOKEN_2022,
  TransferFeeConfigLayout,
  getAccountLen,
  getMintLen,
  getTransferFeeAmount,
  getTransferFeeConfig,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { ErrorCode, isTpError } from '../../errors.js';
import { Prng } from '../testing/prng.js';
import { thrownCode } from '../testing/errors.js';
import { decodeMint, encodeMint } from './mint.js';
import { encodeExtendedTokenAccount, withheldAmount } from './token-account.js';
import { ExtensionType, MULTISIG_SIZE, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './token-programs.js';
import type { TransferFeeConfig } from './transfer-fee.js';

const KEY_1 = base58.encode(new Uint8Array(32).fill(1));
const KEY_2 = base58.encode(new Uint8Array(32).fill(2));

/** `TEST_MINT_SLICE`: authority [1; 32], supply 42, decimals 7, freeze authority [2; 32]. */
function testMintSlice(): Uint8Array {
  const data = new Uint8Array(82);
  data.set([1, 0, 0, 0], 0);
  data.fill(1, 4, 36);
  data[36] = 42;
  data[44] = 7;
  data[45] = 1;
  data.set([1, 0, 0, 0], 46);
  data.fill(2, 50, 82);
  return data;
}

/** `MINT_WITH_ACCOUNT_TYPE`: the base, zero padding to 165, account type 1, nothing after. */
function mintWithAccountType(): Uint8Array {
  const data = new Uint8Array(166);
  data.set(testMintSlice(), 0);
  data[165] = 1;
  return data;
}

/** `MINT_WITH_EXTENSION`: then MintCloseAuthority (type 3, 32 bytes of 1). */
function mintWithExtension(): Uint8Array {
  const data = new Uint8Array(166 + 4 + 32);
  data.set(mintWithAccountType(), 0);
  data.set([3, 0, 32, 0], 166);
  data.fill(1, 170, 202);
  return data;
}

const FEE_CONFIG: TransferFeeConfig = {
  transferFeeConfigAuthority: KEY_1,
  withdrawWithheldAuthority: null,
  withheldAmount: 123_456_789n,
  olderTransferFee: { epoch: 700n, maximumFee: 5_000_000_000n, transferFeeBasisPoints: 100 },
  newerTransferFee: { epoch: 702n, maximumFee: 7_500_000_000n, transferFeeBasisPoints: 250 },
};

describe('decodeMint on the token program\'s own test vectors', () => {
  const base = { mintAuthority: KEY_1, supply: 42n, decimals: 7, freezeAuthority: KEY_2 };

  it('reads a base mint under either program, and the extended forms under Token-2022', () => {
    expect(decodeMint(TOKEN_PROGRAM_ID, testMintSlice())).toEqual({ programId: TOKEN_PROGRAM_ID, ...base, extensionTypes: [] });
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, testMintSlice())).toEqual({ programId: TOKEN_2022_PROGRAM_ID, ...base, extensionTypes: [] });
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, mintWithAccountType())).toMatchObject({ ...base, extensionTypes: [] });
    const withClose = decodeMint(TOKEN_2022_PROGRAM_ID, mintWithExtension(), 'addr');
    expect(withClose).toMatchObject({ ...base, address: 'addr', extensionTypes: [ExtensionType.MintCloseAuthority] });
    expect(withClose.transferFeeConfig).toBeUndefined();
  });

  it('refuses what the program refuses: account type, padding, initialized byte, lengths', () => {
    const tweak = (at: number, value: number): Uint8Array => {
      const data = mintWithExtension();
      data[at] = value;
      return data;
    };
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(165, 3)))).toBe(ErrorCode.AccountInvalid);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(165, 2)))).toBe(ErrorCode.AccountInvalid); // a token account's type
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(82, 100)))).toBe(ErrorCode.AccountInvalid); // padding
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(45, 0)))).toBe(ErrorCode.AccountInvalid); // uninitialized
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(45, 2)))).toBe(ErrorCode.AccountInvalid);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(0, 2)))).toBe(ErrorCode.AccountInvalid); // option tag
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tweak(169, 100)))).toBe(ErrorCode.AccountInvalid); // length past the end
    // Another extension's type there: the mint still decodes, with no transfer fee.
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, tweak(166, 2)).transferFeeConfig).toBeUndefined();
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, new Uint8Array([0, 3])))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeMint(TOKEN_PROGRAM_ID, mintWithAccountType()))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, mintWithAccountType().subarray(0, 120)))).toBe(ErrorCode.AccountInvalid);
    expect(thrownCode(() => decodeMint('11111111111111111111111111111111', testMintSlice()))).toBe(ErrorCode.UnknownOwner);
    // 355 bytes is a multisig's size: never read as extensions.
    const multisigSized = new Uint8Array(MULTISIG_SIZE);
    multisigSized.set(testMintSlice());
    multisigSized.fill(9, 82);
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, multisigSized).extensionTypes).toEqual([]);
  });

  it('ends the entries at a zero type or a lone trailing byte, as the program does', () => {
    const data = new Uint8Array(mintWithExtension().length + 6);
    data.set(mintWithExtension());
    // Zero type then garbage: ignored.
    data.set([0, 0, 0xff, 0xff, 7, 7], 202);
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, data).extensionTypes).toEqual([ExtensionType.MintCloseAuthority]);
    const trailing = new Uint8Array(203);
    trailing.set(mintWithExtension());
    trailing[202] = 5;
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, trailing).extensionTypes).toEqual([ExtensionType.MintCloseAuthority]);
    // Two bytes of a type but no length: malformed.
    const cut = new Uint8Array(205);
    cut.set(mintWithExtension());
    cut.set([1, 0, 5], 202);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, cut))).toBe(ErrorCode.AccountInvalid);
  });
});

function splMintBytes(config: TransferFeeConfig, extraFirst: boolean): Buffer {
  // Built with spl-token's own layouts: base, padding, account type, [MintCloseAuthority], TransferFeeConfig.
  const types = extraFirst ? [SplExtensionType.MintCloseAuthority, SplExtensionType.TransferFeeConfig] : [SplExtensionType.TransferFeeConfig];
  const data = Buffer.alloc(getMintLen(types));
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: new PublicKey(KEY_2),
      supply: 10n ** 15n,
      decimals: 6,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    data,
  );
  data[165] = 1;
  let at = 166;
  if (extraFirst) {
    data.writeUInt16LE(SplExtensionType.MintCloseAuthority, at);
    data.writeUInt16LE(32, at + 2);
    data.fill(4, at + 4, at + 36);
    at += 36;
  }
  data.writeUInt16LE(SplExtensionType.TransferFeeConfig, at);
  data.writeUInt16LE(TransferFeeConfigLayout.span, at + 2);
  TransferFeeConfigLayout.encode(
    {
      transferFeeConfigAuthority: config.transferFeeConfigAuthority === null ? PublicKey.default : new PublicKey(config.transferFeeConfigAuthority),
      withdrawWithheldAuthority: config.withdrawWithheldAuthority === null ? PublicKey.default : new PublicKey(config.withdrawWithheldAuthority),
      withheldAmount: config.withheldAmount,
      olderTransferFee: config.olderTransferFee,
      newerTransferFee: config.newerTransferFee,
    },
    data,
    at + 4,
  );
  return data;
}

function splInfo(data: Uint8Array, owner: string) {
  return { data: Buffer.from(data), owner: new PublicKey(owner), lamports: 1, executable: false };
}

describe('Token-2022 mints with a TransferFeeConfig, against @solana/spl-token', () => {
  it('decodes the extension spl-token writes, after other extensions too', () => {
    for (const extraFirst of [false, true]) {
      const bytes = splMintBytes(FEE_CONFIG, extraFirst);
      const mint = decodeMint(TOKEN_2022_PROGRAM_ID, bytes);
      expect(mint.transferFeeConfig).toEqual(FEE_CONFIG);
      expect(mint).toMatchObject({ mintAuthority: KEY_2, freezeAuthority: null, supply: 10n ** 15n, decimals: 6 });
      expect(mint.extensionTypes).toEqual(extraFirst ? [ExtensionType.MintCloseAuthority, ExtensionType.TransferFeeConfig] : [ExtensionType.TransferFeeConfig]);
    }
  });

  it('encodes what spl-token reads back: sizes, base fields and the fee config', () => {
    const bytes = encodeMint({ programId: TOKEN_2022_PROGRAM_ID, mintAuthority: KEY_1, supply: 77n, decimals: 9, freezeAuthority: KEY_2, transferFeeConfig: FEE_CONFIG });
    expect(bytes.length).toBe(getMintLen([SplExtensionType.TransferFeeConfig]));
    const mint = unpackMint(PublicKey.default, splInfo(bytes, SPL_TOKEN_2022.toBase58()), SPL_TOKEN_2022);
    expect(mint.mintAuthority?.toBase58()).toBe(KEY_1);
    expect(mint.freezeAuthority?.toBase58()).toBe(KEY_2);
    expect([mint.supply, mint.decimals, mint.isInitialized]).toEqual([77n, 9, true]);
    const config = getTransferFeeConfig(mint)!;
    expect(config.transferFeeConfigAuthority.toBase58()).toBe(KEY_1);
    expect(config.withdrawWithheldAuthority.equals(PublicKey.default)).toBe(true);
    expect(config.withheldAmount).toBe(FEE_CONFIG.withheldAmount);
    expect(config.olderTransferFee).toEqual(FEE_CONFIG.olderTransferFee);
    expect(config.newerTransferFee).toEqual(FEE_CONFIG.newerTransferFee);
    // A plain mint stays 82 bytes under either program.
    expect(encodeMint({ mintAuthority: null, supply: 1n, decimals: 0, freezeAuthority: null }).length).toBe(MINT_SIZE);
    expect(decodeMint(TOKEN_PROGRAM_ID, encodeMint({ mintAuthority: null, supply: 1n, decimals: 0, freezeAuthority: null }))).toMatchObject({ mintAuthority: null, supply: 1n });
  });

  it('refuses a TransferFeeConfig of the wrong size or above 100 %', () => {
    const bytes = Buffer.from(splMintBytes(FEE_CONFIG, false));
    const wrongSize = Buffer.concat([bytes, Buffer.alloc(2)]);
    wrongSize.writeUInt16LE(110, 168);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, wrongSize))).toBe(ErrorCode.AccountInvalid);
    const tooHigh = Buffer.from(bytes);
    tooHigh.writeUInt16LE(10_001, 170 + 72 + 16);
    expect(thrownCode(() => decodeMint(TOKEN_2022_PROGRAM_ID, tooHigh))).toBe(ErrorCode.AccountInvalid);
    const full = Buffer.from(bytes);
    full.writeUInt16LE(10_000, 170 + 90 + 16);
    expect(decodeMint(TOKEN_2022_PROGRAM_ID, full).transferFeeConfig!.newerTransferFee.transferFeeBasisPoints).toBe(10_000);
  });

  it('answers damaged bytes (every truncation, random corruption) with a TpError or a decode, nothing else', () => {
    const bytes = encodeMint({ programId: TOKEN_2022_PROGRAM_ID, mintAuthority: KEY_1, supply: 77n, decimals: 9, freezeAuthority: null, transferFeeConfig: FEE_CONFIG });
    const rng = new Prng(0x7022);
    const outcomes = { decoded: 0, refused: 0 };
    const attempt = (data: Uint8Array): void => {
      try {
        const mint = decodeMint(TOKEN_2022_PROGRAM_ID, data);
        const fee = mint.transferFeeConfig;
        if (fee !== undefined) {
          expect(fee.olderTransferFee.transferFeeBasisPoints).toBeLessThanOrEqual(10_000);
          expect(fee.newerTransferFee.transferFeeBasisPoints).toBeLessThanOrEqual(10_000);
        }
        outcomes.decoded++;
      } catch (err) {
        expect(isTpError(err), String(err)).toBe(true);
        outcomes.refused++;
      }
    };
    for (let n = 0; n <= bytes.length + 8; n++) {
      const data = new Uint8Array(n);
      data.set(bytes.subarray(0, Math.min(n, bytes.length)));
      attempt(data);
    }
    for (let i = 0; i < 5000; i++) {
      const data = bytes.slice();
      for (let k = rng.int(1, 4); k > 0; k--) data[rng.int(0, data.length - 1)] = rng.int(0, 255);
      attempt(data);
    }
    expect(outcomes.decoded).toBeGreaterThan(1000);
    expect(outcomes.refused).toBeGreaterThan(100);
  });
});

describe('Token-2022 token accounts with TransferFeeAmount, against @solana/spl-token', () => {
  it('encodes the account an associated token account of a fee mint is (182 bytes) and reads its withheld amount', () => {
    const bytes = encodeExtendedTokenAccount({ mint: KEY_1, owner: KEY_2, amount: 5_000n, withheldAmount: 17n, immutableOwner: true });
    expect(bytes.length).toBe(getAccountLen([SplExtensionType.TransferFeeAmount, SplExtensionType.ImmutableOwner]));
    expect(bytes.length).toBe(182);
    const account = unpackAccount(PublicKey.default, splInfo(bytes, SPL_TOKEN_2022.toBase58()), SPL_TOKEN_2022);
    expect([account.mint.toBase58(), account.owner.toBase58(), account.amount, account.isInitialized]).toEqual([KEY_1, KEY_2, 5_000n, true]);
    expect(getTransferFeeAmount(account)!.withheldAmount).toBe(17n);
    expect(withheldAmount(bytes)).toBe(17n);
    // A classic account has none; a damaged extension area is a TpError.
    expect(withheldAmount(bytes.subarray(0, 165))).toBeUndefined();
    const damaged = bytes.slice();
    damaged[165 + 1 + 2] = 9; // TransferFeeAmount length 9
    expect(thrownCode(() => withheldAmount(damaged))).toBe(ErrorCode.AccountInvalid);
  });
});
