import { base58 } from '../chain/index.js';
import type { AccountReader } from './accounts-db.js';
import type { AccountRecord } from './chain-backend.js';
import { TOKEN_PROGRAM_ID } from './known-accounts.js';
import type { Execution } from './runtime.js';
import type { SimTransaction } from './sim-transaction.js';
import { isTokenAccount, mintDecimals, tokenAccountMint, tokenAccountOwner, tokenAmount } from './spl-token.js';

/**
 * The landed transactions that getTransaction answers for, with the status meta a node keeps:
 * fee, error, pre and post lamports of every account key, pre and post token balances of the
 * token accounts among them, logs, compute units, the addresses loaded through lookup tables.
 * Kept for the transactions submitted to the chain (sendTransaction and bundles), not the
 * generated flow, for the last TRANSACTION_HISTORY_SLOTS slots and at most
 * TRANSACTION_HISTORY_MAX transactions (the oldest slots go first). This is the simulator's ledger:
 * it outlives the 300 slots of the status cache, so getSignatureStatuses with
 * searchTransactionHistory and getTransaction answer for a transaction after its status has left
 * the cache, as a node answers from its ledger.
 */

/** An hour of 400 ms slots (four minutes of a test's 25 ms slots). */
export const TRANSACTION_HISTORY_SLOTS = 9_000;
/** The memory bound: a record is a few kilobytes (wire bytes, meta, logs). */
export const TRANSACTION_HISTORY_MAX = 20_000;

export interface RecordedTokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

export interface ConfirmedTransaction {
  slot: bigint;
  blockTime: bigint;
  /** The wire transaction. */
  bytes: Uint8Array;
  version: 'legacy' | 0;
  /** The message as parsed (for the json encoding). */
  message: {
    header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
    accountKeys: readonly string[];
    recentBlockhash: string;
    instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
    addressTableLookups: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[];
  };
  /** base58 of every signature, in order. */
  signatures: string[];
  meta: {
    err: unknown;
    fee: bigint;
    preBalances: bigint[];
    postBalances: bigint[];
    preTokenBalances: RecordedTokenBalance[];
    postTokenBalances: RecordedTokenBalance[];
    logMessages: string[];
    computeUnitsConsumed: number;
    loadedAddresses: { writable: string[]; readonly: string[] };
  };
}

type Landed = Extract<Execution, { landed: true }>;

function tokenBalances(keys: readonly string[], read: (address: string) => AccountRecord | null): RecordedTokenBalance[] {
  const out: RecordedTokenBalance[] = [];
  keys.forEach((key, accountIndex) => {
    const record = read(key);
    if (record === null || record.owner !== TOKEN_PROGRAM_ID || !isTokenAccount(record.data)) return;
    const mint = tokenAccountMint(record.data);
    const mintRecord = read(mint);
    const decimals = mintRecord === null ? undefined : mintDecimals(mintRecord.data);
    if (decimals === undefined) return;
    out.push({ accountIndex, mint, owner: tokenAccountOwner(record.data), programId: record.owner, amount: tokenAmount(record.data), decimals });
  });
  return out;
}

/** The record of `tx` executed on `before` with `result` (its changes not yet committed). */
export function recordTransaction(tx: SimTransaction, result: Landed, before: AccountReader, slot: bigint, blockTime: bigint): ConfirmedTransaction {
  const keys = result.keys;
  const after = (address: string): AccountRecord | null => result.changes.get(address);
  const pre = (address: string): AccountRecord | null => before.get(address);
  const statics = tx.staticKeys.length;
  return {
    slot,
    blockTime,
    bytes: tx.bytes,
    version: tx.version,
    message: {
      header: { numRequiredSignatures: tx.numRequiredSignatures, numReadonlySignedAccounts: tx.numReadonlySigned, numReadonlyUnsignedAccounts: tx.numReadonlyUnsigned },
      accountKeys: tx.staticKeys,
      recentBlockhash: tx.recentBlockhash,
      instructions: tx.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: [...ix.accounts], data: ix.data.slice() })),
      addressTableLookups: tx.lookups.map((l) => ({ accountKey: l.table, writableIndexes: [...l.writableIndexes], readonlyIndexes: [...l.readonlyIndexes] })),
    },
    signatures: Array.from({ length: tx.signatureCount }, (_, i) => base58.encodeAt(tx.bytes, tx.signaturesOffset + 64 * i, 64)),
    meta: {
      err: result.err,
      fee: result.fee,
      preBalances: keys.map((k) => pre(k)?.lamports ?? 0n),
      postBalances: keys.map((k) => after(k)?.lamports ?? 0n),
      preTokenBalances: tokenBalances(keys, pre),
      postTokenBalances: tokenBalances(keys, after),
      logMessages: result.logs.slice(),
      computeUnitsConsumed: result.unitsConsumed,
      loadedAddresses: {
        writable: keys.slice(statics, statics + result.loadedWritable) as string[],
        readonly: keys.slice(statics + result.loadedWritable) as string[],
      },
    },
  };
}

export class TransactionHistory {
  private readonly bySignature = new Map<string, ConfirmedTransaction>();
  private readonly slots: { slot: bigint; signatures: string[] }[] = [];

  constructor(
    private readonly keepSlots = TRANSACTION_HISTORY_SLOTS,
    private readonly maxTransactions = TRANSACTION_HISTORY_MAX,
  ) {}

  /**
   * Records a slot's transactions, keyed by their first signature (base58); every slot in order
   * (an empty one too: it ages the kept ones).
   */
  addSlot(slot: bigint, records: ReadonlyMap<string, ConfirmedTransaction>): void {
    if (records.size > 0) {
      for (const [signature, record] of records) this.bySignature.set(signature, record);
      this.slots.push({ slot, signatures: [...records.keys()] });
    }
    const oldest = slot - BigInt(this.keepSlots);
    while (this.slots.length > 0 && (this.slots[0]!.slot <= oldest || this.bySignature.size > this.maxTransactions)) {
      for (const signature of this.slots.shift()!.signatures) this.bySignature.delete(signature);
    }
  }

  get(signature: string): ConfirmedTransaction | undefined {
    return this.bySignature.get(signature);
  }
}
