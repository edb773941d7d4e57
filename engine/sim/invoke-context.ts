import type { AccountRecord } from './chain-backend.js';
import type { AccountOverlay } from './accounts-db.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * What a simulated program sees of one instruction: its accounts (address, signer, writable), its
 * data, the accounts state to read and write, and the block time. A program returns null on
 * success or the InstructionError a real program would fail with.
 */
export type ProgramHandler = (ctx: InvokeContext) => InstructionErrorValue | null;

/** One instruction of the transaction, as the instructions sysvar shows it to a program. */
export interface SysvarInstruction {
  programId: string;
  accounts: readonly string[];
  data: Uint8Array;
}

/** The instructions sysvar: the whole transaction's instructions and the one executing. */
export interface InstructionsSysvar {
  readonly current: number;
  instructions(): readonly SysvarInstruction[];
}

const SIGNER = 1;
const WRITABLE = 2;

export class InvokeContext {
  /** Compute units the program reports it used. */
  unitsConsumed = 0;

  constructor(
    readonly programId: string,
    /** The instruction's accounts, in instruction order. */
    readonly keys: readonly string[],
    private readonly flags: Uint8Array,
    readonly data: Uint8Array,
    readonly state: AccountOverlay,
    /** Unix seconds of the block. */
    readonly blockTime: bigint,
    private readonly logs: string[] | null,
    /** The block's epoch (Clock::epoch): selects Token-2022 transfer fees. */
    readonly epoch: bigint = 0n,
    /** What a program reading the instructions sysvar sees (flash loans check their pair through it). */
    readonly sysvar: InstructionsSysvar = { current: 0, instructions: () => [] },
  ) {}

  static flagsOf(signer: boolean, writable: boolean): number {
    return (signer ? SIGNER : 0) | (writable ? WRITABLE : 0);
  }

  get accountCount(): number {
    return this.keys.length;
  }

  isSigner(i: number): boolean {
    return (this.flags[i]! & SIGNER) !== 0;
  }

  isWritable(i: number): boolean {
    return (this.flags[i]! & WRITABLE) !== 0;
  }

  account(i: number): AccountRecord | null {
    return this.state.get(this.keys[i]!);
  }

  /**
   * Stores a new record for account `i`; fails as the runtime does when the instruction did not
   * mark the account writable.
   */
  put(i: number, record: AccountRecord): InstructionErrorValue | null {
    if (!this.isWritable(i)) {
      const before = this.account(i);
      return before !== null && before.lamports !== record.lamports ? IxError.ReadonlyLamportChange : IxError.ReadonlyDataModified;
    }
    this.state.set(this.keys[i]!, record);
    return null;
  }

  /** Deletes account `i` (an account left with no lamports, as the runtime drops it). */
  remove(i: number): InstructionErrorValue | null {
    if (!this.isWritable(i)) return IxError.ReadonlyLamportChange;
    this.state.set(this.keys[i]!, null);
    return null;
  }

  consume(units: number): void {
    this.unitsConsumed += units;
  }

  /** A `Program log:` line (kept only when the caller collects logs, e.g. simulation). */
  log(message: string): void {
    this.logs?.push(`Program log: ${message}`);
  }

  /** A log line as is (an inner instruction's `Program … invoke [2]`, …). */
  logRaw(line: string): void {
    this.logs?.push(line);
  }

  get collectingLogs(): boolean {
    return this.logs !== null;
  }
}
