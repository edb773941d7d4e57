/**
 * The flash-loan reserves an operator configured (by address), read from the chain: each Reserve
 * account gives its market, mint, vaults, fee and what it can lend now. The reader is any
 * getMultipleAccounts (the platform's RpcClient, a test's chain), so this folder needs no RPC.
 */
import { ErrorCode, TpError } from '../errors.js';
import { decodeReserve, FLASH_LOANS_DISABLED_SF, KLEND_PROGRAM_ID, type FlashLoanReserve } from './kamino-flash-loan.js';

export interface ReserveAccount {
  owner: string;
  data: Uint8Array;
}

/** Reads accounts by address (null: none there). */
export type ReadAccounts = (addresses: readonly string[]) => Promise<readonly (ReserveAccount | null)[]>;

export interface LoadedReserve extends FlashLoanReserve {
  availableAmount: bigint;
}

/** A ReadAccounts over any getMultipleAccounts (the platform's RpcClient). */
export function readAccountsOf(client: { getMultipleAccounts(addresses: readonly string[]): Promise<{ accounts: readonly (ReserveAccount | null)[] }> }): ReadAccounts {
  return async (addresses) => (await client.getMultipleAccounts(addresses)).accounts;
}

/**
 * The reserves at `addresses`, in order. TP_ERR_CONFIG_INVALID naming `setting` for an address that
 * holds no klend Reserve, one whose flash loans are disabled, or two reserves of one mint.
 */
export async function loadFlashLoanReserves(read: ReadAccounts, addresses: readonly string[], setting = 'flashLoan.reserves'): Promise<LoadedReserve[]> {
  const accounts = await read(addresses);
  const out: LoadedReserve[] = [];
  const mints = new Set<string>();
  addresses.forEach((address, i) => {
    const account = accounts[i] ?? null;
    const bad = (why: string): never => {
      throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${address} ${why}`, { context: { setting } });
    };
    if (account === null) bad('holds no account');
    if (account!.owner !== KLEND_PROGRAM_ID) bad(`is owned by ${account!.owner}, not Kamino Lending (${KLEND_PROGRAM_ID})`);
    let r;
    try {
      r = decodeReserve(account!.data);
    } catch (err) {
      return bad(`is not a Reserve account: ${(err as Error).message}`);
    }
    if (r.feeSf === FLASH_LOANS_DISABLED_SF) bad('has flash loans disabled');
    if (mints.has(r.liquidityMint)) bad(`lends ${r.liquidityMint}, as another configured reserve does`);
    mints.add(r.liquidityMint);
    out.push({ programId: KLEND_PROGRAM_ID, reserve: address, lendingMarket: r.lendingMarket, liquidityMint: r.liquidityMint, supplyVault: r.supplyVault, feeVault: r.feeVault, feeSf: r.feeSf, availableAmount: r.availableAmount });
  });
  return out;
}
