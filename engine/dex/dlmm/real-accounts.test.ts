/**
 * Meteora DLMM on account bytes taken from mainnet (engine/dex/test-fixtures/README.md names the
 * repository, path and commit of each file): every LbPair and BinArray decodes, agrees field by
 * field with the SDK's Anchor coder on the same bytes, and quotes equal to the SDK's `swapQuote` /
 * `swapQuoteExactOut` on the same bytes, to the unit; the mints (one a Token-2022 mint with a
 * TransferFeeConfig) decode as @solana/spl-token reads them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTransferFeeConfig, TOKEN_2022_PROGRAM_ID as SPL_TOKEN_2022, TOKEN_PROGRAM_ID as SPL_TOKEN, unpackMint } from '@solana/spl-token';
import { PublicKey as Web3PublicKey } from '@solana/web3.js';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { decodeMint } from '../token-2022/mint.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../token-2022/token-programs.js';
import { SwapMode } from '../types.js';
import { decodeBinArray } from './bin-array.js';
import { quoteDlmm, type DlmmSwapQuote } from './dlmm-swap.js';
import { decodeLbPair } from './lb-pair.js';
import { big, bn, sdkDlmm, type SdkDlmm } from './testing/meteora-sdk.js';
import { sdkBinArrayAccount, sdkDecodeBinArray, sdkDecodeLbPair } from './testing/sdk-accounts.js';

const DIR = join(import.meta.dirname, '../test-fixtures/meteora-dlmm');
const PAIRS = ['9t3EyC9FweyL7PBWvKz3mrXg8B9fwFc9SK3QxM4ENqhd', 'B5Eia4cE71tKuEDaqPHucJLG2fxySKyKzLMewd2nUvoc', 'EtAdVRLFH22rjWh3mcUasKFF27WtHhsaCvK27tPFFWig'];

function read(pair: string, name: string): Uint8Array | undefined {
  try {
    return new Uint8Array(readFileSync(join(DIR, pair, `${name}.bin`)));
  } catch {
    return undefined;
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(PAIRS)('Meteora DLMM mainnet pair %s', (pair) => {
  const lbBytes = read(pair, 'lb_pair')!;
  const arrayBytes = [read(pair, 'bin_array_1')!, read(pair, 'bin_array_2')!];

  it('decodes its LbPair and bin arrays as the SDK\'s Anchor coder does', () => {
    const ours = decodeLbPair(lbBytes, pair);
    const sdk = sdkDecodeLbPair(lbBytes) as Record<string, { toString(): string } & Record<string, { toString(): string }>>;
    expect(ours.activeId).toBe(Number(sdk.activeId!.toString()));
    expect(ours.binStep).toBe(Number(sdk.binStep!.toString()));
    expect([ours.tokenA, ours.tokenB, ours.reserveX, ours.reserveY]).toEqual([sdk.tokenXMint, sdk.tokenYMint, sdk.reserveX, sdk.reserveY].map(String));
    expect(ours.parameters.baseFactor).toBe(Number(sdk.parameters!.baseFactor!.toString()));
    expect(ours.vParameters.volatilityAccumulator).toBe(Number(sdk.vParameters!.volatilityAccumulator!.toString()));
    for (const bytes of arrayBytes) {
      const array = decodeBinArray(bytes);
      const sdkArray = sdkDecodeBinArray(bytes) as { index: { toString(): string }; lbPair: { toString(): string }; bins: { amountX: { toString(): string }; amountY: { toString(): string }; price: { toString(): string } }[] };
      expect(array.pool).toBe(pair);
      expect(array.index.toString()).toBe(sdkArray.index.toString());
      expect(array.bins.map((b) => [b.amountX, b.amountY, b.price].map(String))).toEqual(sdkArray.bins.map((b) => [b.amountX, b.amountY, b.price].map(String)));
    }
  });

  it('quotes as the SDK\'s swapQuote and swapQuoteExactOut on the same bytes, to the unit', () => {
    const pool = decodeLbPair(lbBytes, pair);
    const binArrays = arrayBytes.map((b) => decodeBinArray(b));
    const sdk: SdkDlmm = sdkDlmm(pair, sdkDecodeLbPair(lbBytes));
    const sdkArrays = arrayBytes.map((b, i) => sdkBinArrayAccount(sdkDecodeBinArray(b), PAIRS[i]!));
    // The SDK reads the clock from Date.now(); ours from ctx.nowSeconds: the pair's last update.
    const nowSeconds = pool.vParameters.lastUpdateTimestamp;
    vi.spyOn(Date, 'now').mockReturnValue(Number(nowSeconds) * 1000);
    const ctx = { binArrays, nowSeconds };
    const liquidity = binArrays.flatMap((a) => a.bins);
    const totalX = liquidity.reduce((s, b) => s + b.amountX, 0n);
    const totalY = liquidity.reduce((s, b) => s + b.amountY, 0n);
    let quotes = 0;
    for (const swapForY of [true, false]) {
      for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
        // In: a share of what the other side could take; out: a share of the output side's bins.
        const scale = mode === SwapMode.ExactOut ? (swapForY ? totalY : totalX) : swapForY ? totalX : totalY;
        for (const share of [1_000_000n, 10_000n, 1_000n, 100n, 20n]) {
          const amount = scale / share;
          if (amount === 0n) continue;
          const ours = quoteDlmm(pool, { aToB: swapForY, mode, amount }, ctx);
          let ref: { amountIn: bigint; amountOut: bigint; fee: bigint; protocolFee: bigint } | undefined;
          try {
            if (mode === SwapMode.ExactIn) {
              const q = sdk.swapQuote(bn(amount), swapForY, bn(0), sdkArrays);
              ref = { amountIn: big(q.consumedInAmount), amountOut: big(q.outAmount), fee: big(q.fee), protocolFee: big(q.protocolFee) };
            } else {
              const q = sdk.swapQuoteExactOut(bn(amount), swapForY, bn(0), sdkArrays);
              ref = { amountIn: big(q.inAmount), amountOut: big(q.outAmount), fee: big(q.fee), protocolFee: big(q.protocolFee) };
            }
          } catch (err) {
            if (!(err instanceof Error && /insufficient liquidity/i.test(err.message))) throw err;
          }
          const label = `${swapForY ? 'X→Y' : 'Y→X'} ${mode} ${amount}`;
          if (ref === undefined) {
            expect(ours.ok, `${label}: the SDK found too little liquidity`).toBe(false);
            continue;
          }
          expect(ours.ok, `${label}: ${ours.ok ? '' : ours.message}`).toBe(true);
          const q = ours as DlmmSwapQuote;
          expect({ amountIn: q.amountIn, amountOut: q.amountOut, lpFee: q.lpFee, protocolFee: q.protocolFee }, label).toEqual({
            amountIn: ref.amountIn,
            amountOut: ref.amountOut,
            lpFee: ref.fee,
            protocolFee: ref.protocolFee,
          });
          quotes++;
        }
      }
    }
    expect(quotes).toBeGreaterThan(8);
  });

  it('decodes its mints as @solana/spl-token does, a Token-2022 TransferFeeConfig included', () => {
    for (const name of ['token_x_mint', 'token_y_mint']) {
      const bytes = read(pair, name);
      if (bytes === undefined) continue;
      // The fixtures are bare data: an 82-byte mint is SPL Token's, a longer one Token-2022's.
      const owner = bytes.length === 82 ? TOKEN_PROGRAM_ID : TOKEN_2022_PROGRAM_ID;
      const ours = decodeMint(owner, bytes);
      const spl = unpackMint(Web3PublicKey.default, { data: Buffer.from(bytes), owner: bytes.length === 82 ? SPL_TOKEN : SPL_TOKEN_2022, lamports: 1, executable: false }, bytes.length === 82 ? SPL_TOKEN : SPL_TOKEN_2022);
      expect(ours.decimals).toBe(spl.decimals);
      expect(ours.supply).toBe(spl.supply);
      const fee = getTransferFeeConfig(spl);
      expect(ours.transferFeeConfig === undefined).toBe(fee === null);
      if (fee !== null && ours.transferFeeConfig !== undefined) {
        expect(ours.transferFeeConfig.newerTransferFee.transferFeeBasisPoints).toBe(fee.newerTransferFee.transferFeeBasisPoints);
        expect(ours.transferFeeConfig.newerTransferFee.maximumFee).toBe(fee.newerTransferFee.maximumFee);
        expect(ours.transferFeeConfig.olderTransferFee.epoch).toBe(fee.olderTransferFee.epoch);
      }
    }
  });
});

it('includes a Token-2022 mint with extensions among the real mints', () => {
  const bytes = read('B5Eia4cE71tKuEDaqPHucJLG2fxySKyKzLMewd2nUvoc', 'token_x_mint')!;
  expect(bytes.length).toBeGreaterThan(165);
  expect(decodeMint(TOKEN_2022_PROGRAM_ID, bytes).transferFeeConfig).toBeDefined();
});
