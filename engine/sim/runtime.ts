import { AccountOverlay, type AccountReader } from './accounts-db.js';
import { InvokeContext, type SysvarInstruction, type ProgramHandler } from './invoke-context.js';
import { KeyCache } from './key-cache.js';
import {
  ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  DEFAULT_COMPUTE_UNITS_PER_INSTRUCTION,
  LAMPORTS_PER_SIGNATURE,
  MAX_COMPUTE_UNITS_PER_TRANSACTION,
  SYSTEM_PROGRAM_ID,
  rentExemptMinimum,
} from './known-accounts.js';
import { isStaticWritable, type SimTransaction } from './sim-transaction.js';
import { IxError, TxError, instructionError, instructionErrorText, type TransactionErrorValue } from './tx-errors.js';

/**
 * The simulated runtime: executes one parsed transaction against an accounts state, as a validator
 * does once the transaction is in a block (signature and blockhash checks are the caller's):
 * resolve address-table lookups, read the compute budget, check and charge the fee, run each
 * instruction with its program, and keep either every change or, when an instruction fails, only
 * the fee. A transaction whose fee cannot be charged does not land at all.
 */

export interface ExecutionOptions {
  blockTime: bigint;
  /**
   * The slot the transaction executes in: lookup-table addresses added in this slot or a later
   * one (index ≥ last_extended_slot_start_index while slot ≤ last_extended_slot) are not usable
   * yet, as on chain. Without it every address of a table is usable.
   */
  slot?: bigint;
  /** Collect program logs (simulation); the flow's execution skips them. */
  collectLogs?: boolean;
  /** The slot's epoch (Token-2022 transfer fees). Default 0. */
  epoch?: bigint;
}

export type Execution =
  /** Not included in the block: nothing changes, no fee. */
  | { landed: false; err: TransactionErrorValue }
  /** In the block: `changes` holds the fee and, when err is null, every change. */
  | {
      landed: true;
      err: TransactionErrorValue | null;
      fee: bigint;
      changes: AccountOverlay;
      logs: string[];
      unitsConsumed: number;
      /** Every account key, static then looked up (writable, readonly), and which are writable. */
      keys: readonly string[];
      writable: Uint8Array;
      /** The SetComputeUnitPrice of the transaction (micro-lamports per unit), 0 without one. */
      unitPrice: bigint;
      /** The addresses loaded through lookup tables: how many of `keys` after the static ones are writable. */
      loadedWritable: number;
    };

const NO_LOGS: string[] = [];
const ALT_ADDRESSES_OFFSET = 56;
const ALT_DEACTIVATION_SLOT = 4;
const ALT_LAST_EXTENDED_SLOT = 12;
const ALT_LAST_EXTENDED_START = 20;
const U64_MAX = (1n << 64n) - 1n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

const ComputeBudgetTag = { RequestHeapFrame: 1, SetComputeUnitLimit: 2, SetComputeUnitPrice: 3, SetLoadedAccountsDataSizeLimit: 4 } as const;

interface Budget {
  unitLimit: number;
  /** Micro-lamports per compute unit. */
  unitPrice: bigint;
}

export class Runtime {
  constructor(
    private readonly programs: ReadonlyMap<string, ProgramHandler>,
    /** base58 of looked-up addresses (the chain shares its parser's). */
    private readonly keys: KeyCache = new KeyCache(),
  ) {}

  execute(tx: SimTransaction, state: AccountReader, options: ExecutionOptions): Execution {
    const resolved = resolveAccounts(tx, state, options.slot, this.keys);
    if (typeof resolved === 'string') return { landed: false, err: resolved };
    const { keys, writable } = resolved;

    const budget = readComputeBudget(tx, keys);
    const used = budget.ok ? budget.budget : defaultBudget(tx, keys);
    const fee = BigInt(tx.signatureCount) * LAMPORTS_PER_SIGNATURE + prioritizationFee(used);
    const loadedWritable = countWritableLookups(tx);
    const payer = state.get(keys[0]!);
    if (payer === null) return { landed: false, err: TxError.AccountNotFound };
    if (payer.owner !== SYSTEM_PROGRAM_ID) return { landed: false, err: TxError.InvalidAccountForFee };
    if (payer.lamports < fee) return { landed: false, err: TxError.InsufficientFundsForFee };

    const changes = new AccountOverlay(state);
    changes.set(keys[0]!, { ...payer, lamports: payer.lamports - fee });
    const logs: string[] | null = options.collectLogs === true ? [] : null;
    const done = (err: TransactionErrorValue | null, units: number): Execution => ({
      landed: true,
      err,
      fee,
      changes,
      logs: logs ?? NO_LOGS,
      unitsConsumed: units,
      keys,
      writable,
      unitPrice: used.unitPrice,
      loadedWritable,
    });
    if (!budget.ok) return done(budget.err, 0);

    // Every invoked program must be an executable account (load failures are fee-only).
    for (const ix of tx.instructions) {
      const program = state.get(keys[ix.programIdIndex]!);
      if (program === null) return done(TxError.ProgramAccountNotFound, 0);
      if (!program.executable) return done(TxError.InvalidProgramForExecution, 0);
    }

    const work = new AccountOverlay(changes);
    let units = 0;
    // The instructions sysvar, built once and only when a program reads it.
    let sysvarInstructions: SysvarInstruction[] | undefined;
    const instructionsOf = (): readonly SysvarInstruction[] =>
      (sysvarInstructions ??= tx.instructions.map((x) => ({ programId: keys[x.programIdIndex]!, accounts: Array.from(x.accounts, (k) => keys[k]!), data: x.data })));
    for (let i = 0; i < tx.instructions.length; i++) {
      const ix = tx.instructions[i]!;
      const programId = keys[ix.programIdIndex]!;
      logs?.push(`Program ${programId} invoke [1]`);
      const ixKeys = new Array<string>(ix.accounts.length);
      const flags = new Uint8Array(ix.accounts.length);
      for (let a = 0; a < ix.accounts.length; a++) {
        const k = ix.accounts[a]!;
        ixKeys[a] = keys[k]!;
        flags[a] = InvokeContext.flagsOf(k < tx.numRequiredSignatures, writable[k] === 1);
      }
      const ctx = new InvokeContext(programId, ixKeys, flags, ix.data, work, options.blockTime, logs, options.epoch ?? 0n, { current: i, instructions: instructionsOf });
      const handler = this.programs.get(programId);
      let err = handler === undefined ? IxError.UnsupportedProgramId : handler(ctx);
      units += ctx.unitsConsumed;
      if (err === null && units > budget.budget.unitLimit) err = IxError.ComputationalBudgetExceeded;
      if (logs !== null) {
        logs.push(`Program ${programId} consumed ${ctx.unitsConsumed} of ${budget.budget.unitLimit - units + ctx.unitsConsumed} compute units`);
        logs.push(err === null ? `Program ${programId} success` : `Program ${programId} failed: ${instructionErrorText(err)}`);
      }
      if (err !== null) return done(instructionError(i, err), units);
    }

    // Rent: no account the transaction wrote may be left with a balance below the rent-exempt
    // minimum of its size, unless empty (RentState transitions, simplified to "must stay exempt").
    for (const [address, record] of work.changes) {
      if (record === null || record.lamports === 0n) continue;
      if (record.lamports < rentExemptMinimum(record.data.length)) {
        const before = state.get(address);
        if (before === null || before.lamports >= rentExemptMinimum(before.data.length)) {
          return done({ InsufficientFundsForRent: { account_index: keys.indexOf(address) } }, units);
        }
      }
    }
    work.commitInto(changes);
    return done(null, units);
  }
}

interface ResolvedAccounts {
  keys: string[];
  /** 1 when writable, per key. */
  writable: Uint8Array;
}

/**
 * Static keys, then every lookup's writable addresses, then every lookup's readonly ones. A table's
 * usable length in `slot` is all of it after its last_extended_slot, else the addresses before
 * last_extended_slot_start_index (AddressLookupTable::get_active_addresses_len).
 */
function resolveAccounts(tx: SimTransaction, state: AccountReader, slot: bigint | undefined, keyCache: KeyCache): ResolvedAccounts | TransactionErrorValue & string {
  const staticCount = tx.staticKeys.length;
  if (tx.lookups.length === 0) {
    const writable = new Uint8Array(staticCount);
    for (let k = 0; k < staticCount; k++) writable[k] = isStaticWritable(tx, k) ? 1 : 0;
    demoteInvokedPrograms(tx, writable);
    return { keys: tx.staticKeys as string[], writable };
  }
  const tables: Uint8Array[] = [];
  const usable: number[] = [];
  for (const lookup of tx.lookups) {
    const table = state.get(lookup.table);
    if (table === null) return TxError.AddressLookupTableNotFound;
    if (table.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM_ID || table.data.length < ALT_ADDRESSES_OFFSET) {
      return TxError.InvalidAddressLookupTableOwner;
    }
    const view = new DataView(table.data.buffer, table.data.byteOffset, table.data.byteLength);
    const deactivation = view.getBigUint64(ALT_DEACTIVATION_SLOT, true);
    if (deactivation !== U64_MAX) return TxError.AddressLookupTableNotFound;
    if ((table.data.length - ALT_ADDRESSES_OFFSET) % 32 !== 0) return TxError.InvalidAddressLookupTableData;
    const count = (table.data.length - ALT_ADDRESSES_OFFSET) >> 5;
    const extendedIn = view.getBigUint64(ALT_LAST_EXTENDED_SLOT, true);
    usable.push(slot === undefined || slot > extendedIn ? count : Math.min(count, table.data[ALT_LAST_EXTENDED_START]!));
    tables.push(table.data);
  }
  const keys = tx.staticKeys.slice();
  const flags: number[] = [];
  for (let k = 0; k < staticCount; k++) flags.push(isStaticWritable(tx, k) ? 1 : 0);
  for (const pass of [0, 1] as const) {
    for (let l = 0; l < tx.lookups.length; l++) {
      const data = tables[l]!;
      const indexes = pass === 0 ? tx.lookups[l]!.writableIndexes : tx.lookups[l]!.readonlyIndexes;
      const count = usable[l]!;
      for (const index of indexes) {
        if (index >= count) return TxError.InvalidAddressLookupTableIndex;
        keys.push(keyCache.keyAt(data, ALT_ADDRESSES_OFFSET + index * 32));
        flags.push(pass === 0 ? 1 : 0);
      }
    }
  }
  if (new Set(keys).size !== keys.length) return TxError.AccountLoadedTwice;
  const writable = Uint8Array.from(flags);
  demoteInvokedPrograms(tx, writable);
  return { keys, writable };
}

function countWritableLookups(tx: SimTransaction): number {
  let n = 0;
  for (const lookup of tx.lookups) n += lookup.writableIndexes.length;
  return n;
}

/** Invoked programs are loaded read-only whatever the message says. */
function demoteInvokedPrograms(tx: SimTransaction, writable: Uint8Array): void {
  for (const ix of tx.instructions) writable[ix.programIdIndex] = 0;
}

function defaultBudget(tx: SimTransaction, keys: readonly string[]): Budget {
  let count = 0;
  for (const ix of tx.instructions) if (keys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID) count++;
  return { unitLimit: Math.min(count * DEFAULT_COMPUTE_UNITS_PER_INSTRUCTION, MAX_COMPUTE_UNITS_PER_TRANSACTION), unitPrice: 0n };
}

/** Compute Budget instructions, read before execution; a bad or repeated one fails the transaction. */
function readComputeBudget(tx: SimTransaction, keys: readonly string[]): { ok: true; budget: Budget } | { ok: false; err: TransactionErrorValue; budget: Budget } {
  const budget = defaultBudget(tx, keys);
  const seen = new Set<number>();
  for (let i = 0; i < tx.instructions.length; i++) {
    const ix = tx.instructions[i]!;
    if (keys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID) continue;
    const data = ix.data;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const tag = data[0];
    const expected =
      tag === ComputeBudgetTag.SetComputeUnitPrice ? 9 : tag === ComputeBudgetTag.SetComputeUnitLimit || tag === ComputeBudgetTag.RequestHeapFrame || tag === ComputeBudgetTag.SetLoadedAccountsDataSizeLimit ? 5 : -1;
    if (tag === undefined || data.length !== expected) return { ok: false, err: instructionError(i, IxError.InvalidInstructionData), budget };
    if (seen.has(tag)) return { ok: false, err: { DuplicateInstruction: i }, budget };
    seen.add(tag);
    if (tag === ComputeBudgetTag.SetComputeUnitLimit) budget.unitLimit = Math.min(view.getUint32(1, true), MAX_COMPUTE_UNITS_PER_TRANSACTION);
    else if (tag === ComputeBudgetTag.SetComputeUnitPrice) budget.unitPrice = view.getBigUint64(1, true);
  }
  return { ok: true, budget };
}

/** ceil(unit price (micro-lamports) × unit limit / 1e6). */
function prioritizationFee(budget: Budget): bigint {
  const micro = budget.unitPrice * BigInt(budget.unitLimit);
  return (micro + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
}
