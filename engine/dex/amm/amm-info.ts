import { base58, createProgramAddress, findProgramAddress } from '../../chain/index.js';
import { expectSize, invalidAccount, readPubkey, readU64, writePubkey, writeU64 } from '../account-bytes.js';
import { Dex, type AmmPool } from '../types.js';
import { AMM_ACCOUNT_SIZE } from './amm-pool.js';

/**
 * Raydium AMM v4 `AmmInfo` as the program lays it out (raydium-io/raydium-amm program/src/state.rs,
 * `repr(C, packed)`, 752 bytes, no discriminator; docs/wire-formats.md §4.4). Every field is a
 * u64 unless noted:
 *
 *   0   status            8 nonce (authority bump)   16 order_num   24 depth
 *   32  coin_decimals     40 pc_decimals   48 state   56 reset_flag   64 min_size
 *   72  vol_max_cut_ratio 80 amount_wave   88 coin_lot_size   96 pc_lot_size
 *   104 min_price_multiplier   112 max_price_multiplier   120 sys_decimal_value
 *   Fees  128/136 min_separate num/den   144/152 trade_fee num/den   160/168 pnl num/den
 *         176/184 swap_fee num/den (what a swap charges)
 *   StateData  192 need_take_pnl_coin   200 need_take_pnl_pc   208 total_pnl_pc
 *         216 total_pnl_coin   224 pool_open_time   232 padding[2]   248 orderbook_to_init_time
 *         256 swap_coin_in_amount u128   272 swap_pc_out_amount u128   288 swap_acc_pc_fee
 *         296 swap_pc_in_amount u128   312 swap_coin_out_amount u128   328 swap_acc_coin_fee
 *   Pubkeys  336 coin_vault   368 pc_vault   400 coin_vault_mint   432 pc_vault_mint
 *         464 lp_mint   496 open_orders   528 market   560 market_program   592 target_orders
 *   624 padding1[8]   688 amm_owner (pubkey)   720 lp_amount   728 client_order_id
 *   736 recent_epoch   744 padding2
 *
 * Token A is the coin (base) side, token B the pc (quote) side. The reserves are not in the
 * account: a swap reads the two vault token accounts and subtracts need_take_pnl from each
 * (`Calculator::calc_total_without_take_pnl_no_orderbook`), so a decoded AmmInfo has no reserves
 * until `withAmmVaultAmounts` gives it the vault balances.
 */

export const AmmInfoOffset = {
  status: 0,
  nonce: 8,
  orderNum: 16,
  depth: 24,
  coinDecimals: 32,
  pcDecimals: 40,
  state: 48,
  resetFlag: 56,
  minSize: 64,
  volMaxCutRatio: 72,
  amountWave: 80,
  coinLotSize: 88,
  pcLotSize: 96,
  minPriceMultiplier: 104,
  maxPriceMultiplier: 112,
  sysDecimalValue: 120,
  minSeparateNumerator: 128,
  minSeparateDenominator: 136,
  tradeFeeNumerator: 144,
  tradeFeeDenominator: 152,
  pnlNumerator: 160,
  pnlDenominator: 168,
  swapFeeNumerator: 176,
  swapFeeDenominator: 184,
  needTakePnlCoin: 192,
  needTakePnlPc: 200,
  totalPnlPc: 208,
  totalPnlCoin: 216,
  poolOpenTime: 224,
  orderbookToInitTime: 248,
  coinVault: 336,
  pcVault: 368,
  coinMint: 400,
  pcMint: 432,
  lpMint: 464,
  openOrders: 496,
  market: 528,
  marketProgram: 560,
  targetOrders: 592,
  ammOwner: 688,
  lpAmount: 720,
  clientOrderId: 728,
  recentEpoch: 736,
} as const;

/** `AUTHORITY_AMM` seed of the program's vault authority. */
export const AMM_AUTHORITY_SEED = 'amm authority';

/** Decodes a Raydium AMM v4 AmmInfo account. Throws TpError(AccountSize) unless it is 752 bytes. */
export function decodeAmmInfo(data: Uint8Array, address?: string): AmmPool {
  expectSize(data, AMM_ACCOUNT_SIZE, Dex.Amm, 'AmmInfo', address);
  const pool: AmmPool = {
    dex: Dex.Amm,
    tokenA: readPubkey(data, AmmInfoOffset.coinMint),
    tokenB: readPubkey(data, AmmInfoOffset.pcMint),
    status: readU64(data, AmmInfoOffset.status),
    reserveA: 0n,
    reserveB: 0n,
    feeNumerator: readU64(data, AmmInfoOffset.swapFeeNumerator),
    feeDenominator: readU64(data, AmmInfoOffset.swapFeeDenominator),
    vaultA: readPubkey(data, AmmInfoOffset.coinVault),
    vaultB: readPubkey(data, AmmInfoOffset.pcVault),
    needTakePnlA: readU64(data, AmmInfoOffset.needTakePnlCoin),
    needTakePnlB: readU64(data, AmmInfoOffset.needTakePnlPc),
    decimalsA: Number(readU64(data, AmmInfoOffset.coinDecimals) & 0xffn),
    decimalsB: Number(readU64(data, AmmInfoOffset.pcDecimals) & 0xffn),
    poolOpenTime: readU64(data, AmmInfoOffset.poolOpenTime),
  };
  if (address !== undefined) pool.address = address;
  return pool;
}

/** Whether `pool` is a Raydium AMM v4 AmmInfo (its reserves come from vaults), not spec 02's layout. */
export function isAmmInfoPool(pool: AmmPool): boolean {
  return pool.vaultA !== undefined;
}

/**
 * The AmmInfo pool with its vault balances: reserves = amount less need_take_pnl, as the program
 * computes them. A vault holding less than its need_take_pnl gives a reserve of 0 (the program
 * fails such a swap with CheckedSubOverflow; the quote refuses it). Spec 02 pools are returned
 * unchanged (their reserves are in the account).
 */
export function withAmmVaultAmounts(pool: AmmPool, amountA: bigint, amountB: bigint): AmmPool {
  if (!isAmmInfoPool(pool)) return pool;
  const pnlA = pool.needTakePnlA ?? 0n;
  const pnlB = pool.needTakePnlB ?? 0n;
  return {
    ...pool,
    reserveA: amountA >= pnlA ? amountA - pnlA : 0n,
    reserveB: amountB >= pnlB ? amountB - pnlB : 0n,
    vaultAmounts: [amountA, amountB],
  };
}

/**
 * The pool with the given effective reserves (what a PoolStateUpdateEvent carries): for AmmInfo
 * the vault balances are reserve + need_take_pnl; for spec 02's layout the fields themselves.
 */
export function withAmmReserves(pool: AmmPool, reserveA: bigint, reserveB: bigint): AmmPool {
  if (!isAmmInfoPool(pool)) return { ...pool, reserveA, reserveB };
  return withAmmVaultAmounts(pool, reserveA + (pool.needTakePnlA ?? 0n), reserveB + (pool.needTakePnlB ?? 0n));
}

/** The AMM v4 authority of `nonce` (create_program_address), undefined when on the curve. */
export function ammV4Authority(programId: string, nonce: number): string | undefined {
  const key = createProgramAddress([AMM_AUTHORITY_SEED, Uint8Array.of(nonce)], programId);
  return key === undefined ? undefined : base58.encode(key);
}

/** The canonical authority and its nonce (find_program_address), as the program's pools use. */
export function ammV4CanonicalAuthority(programId: string): { address: string; nonce: number } {
  const { address, bump } = findProgramAddress([AMM_AUTHORITY_SEED], programId);
  return { address, nonce: bump };
}

/** What an AMM v4 swap instruction names, read from a pool account. */
export interface AmmV4Keys {
  programId: string;
  pool: string;
  authority: string;
  nonce: number;
  /** Token A (coin) and B (pc) vaults and mints. */
  coinVault: string;
  pcVault: string;
  coinMint: string;
  pcMint: string;
  openOrders: string;
  targetOrders: string;
  market: string;
  marketProgram: string;
  swapFeeNumerator: bigint;
  swapFeeDenominator: bigint;
}

/**
 * The swap keys of AMM v4 pool `pool` from its account bytes. Throws TpError AccountSize when the
 * account is not 752 bytes, AccountInvalid when its nonce gives no valid authority.
 */
export function ammV4Keys(programId: string, pool: string, data: Uint8Array): AmmV4Keys {
  expectSize(data, AMM_ACCOUNT_SIZE, Dex.Amm, 'AmmInfo', pool);
  const nonce = Number(readU64(data, AmmInfoOffset.nonce) & 0xffn);
  const authority = ammV4Authority(programId, nonce);
  if (authority === undefined) throw invalidAccount(Dex.Amm, 'AmmInfo', `AMM ${pool}: nonce ${nonce} gives no authority`, pool);
  return {
    programId,
    pool,
    authority,
    nonce,
    coinVault: readPubkey(data, AmmInfoOffset.coinVault),
    pcVault: readPubkey(data, AmmInfoOffset.pcVault),
    coinMint: readPubkey(data, AmmInfoOffset.coinMint),
    pcMint: readPubkey(data, AmmInfoOffset.pcMint),
    openOrders: readPubkey(data, AmmInfoOffset.openOrders),
    targetOrders: readPubkey(data, AmmInfoOffset.targetOrders),
    market: readPubkey(data, AmmInfoOffset.market),
    marketProgram: readPubkey(data, AmmInfoOffset.marketProgram),
    swapFeeNumerator: readU64(data, AmmInfoOffset.swapFeeNumerator),
    swapFeeDenominator: readU64(data, AmmInfoOffset.swapFeeDenominator),
  };
}

/** The u64 fields of AmmInfo an encoder may set (anything not given is 0). */
type AmmInfoU64Field = Exclude<
  keyof typeof AmmInfoOffset,
  'coinVault' | 'pcVault' | 'coinMint' | 'pcMint' | 'lpMint' | 'openOrders' | 'market' | 'marketProgram' | 'targetOrders' | 'ammOwner'
>;

/** An AmmInfo account's fields: the keys swaps read are required, every other field defaults to 0 (zero key). */
export type AmmInfoFields = Partial<Record<AmmInfoU64Field, bigint>> & {
  status: bigint;
  nonce: bigint;
  coinDecimals: bigint;
  pcDecimals: bigint;
  swapFeeNumerator: bigint;
  swapFeeDenominator: bigint;
  coinVault: string;
  pcVault: string;
  coinMint: string;
  pcMint: string;
  lpMint?: string;
  openOrders?: string;
  market?: string;
  marketProgram?: string;
  targetOrders?: string;
  ammOwner?: string;
};

const PUBKEY_FIELDS = ['coinVault', 'pcVault', 'coinMint', 'pcMint', 'lpMint', 'openOrders', 'market', 'marketProgram', 'targetOrders', 'ammOwner'] as const;

/** Writes an AmmInfo account (752 bytes). Into `out` when given (it must be 752 bytes), else a new buffer. */
export function encodeAmmInfo(fields: AmmInfoFields, out?: Uint8Array): Uint8Array {
  const data = out ?? new Uint8Array(AMM_ACCOUNT_SIZE);
  expectSize(data, AMM_ACCOUNT_SIZE, Dex.Amm, 'AmmInfo');
  if (out !== undefined) data.fill(0);
  for (const [name, offset] of Object.entries(AmmInfoOffset) as [keyof typeof AmmInfoOffset, number][]) {
    const value = (fields as Record<string, bigint | string | undefined>)[name];
    if (value === undefined) continue;
    if ((PUBKEY_FIELDS as readonly string[]).includes(name)) writePubkey(data, offset, value as string);
    else writeU64(data, offset, value as bigint);
  }
  return data;
}
