/**
 * The address lookup tables swaps are compiled with when a route does not fit a legacy transaction
 * (engine/chain fitted-transaction.ts: legacy when it fits, else v0 loading every account it can
 * through these tables): the executor's (`--lookup-tables`) and the swap API's. The tables are the
 * operator's: tables the operator keeps with the pools' accounts, as routers do on mainnet.
 *
 * They are read over RPC (owner checked, decoded with the scanner's decoder) and reused for
 * `ttlMs`; a table that is missing, not a table or deactivated is left out and logged, so a route
 * that fits without it still trades. Addresses appended in the slot of the read are not yet usable
 * (the runtime allows them from the next slot): only the first `lastExtendedSlotStartIndex` are
 * offered then.
 */
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, decodeLookupTable, type LookupTableInput } from '../chain/index.js';
import type { Logger } from '../obs/index.js';
import type { AccountReader } from './account-fetcher.js';
import { ErrorCode, TpError } from '../errors.js';

export const DEFAULT_LOOKUP_TABLE_TTL_MS = 2_000;

export interface OperatorLookupTablesOptions {
  reader: Pick<AccountReader, 'fetch'>;
  addresses: readonly string[];
  /** How long a read is reused, ms. */
  ttlMs?: number;
  now?: () => number;
  logger?: Logger;
}

export class OperatorLookupTables {
  private tables: LookupTableInput[] = [];
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<LookupTableInput[]> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: OperatorLookupTablesOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The usable tables, read again when the last read is older than the TTL (one read at a time). */
  async current(): Promise<LookupTableInput[]> {
    if (this.options.addresses.length === 0) return [];
    if (this.now() - this.readAt <= (this.options.ttlMs ?? DEFAULT_LOOKUP_TABLE_TTL_MS)) return this.tables;
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<LookupTableInput[]> {
    const out: LookupTableInput[] = [];
    for (const address of this.options.addresses) {
      try {
        const account = await this.options.reader.fetch(address, { fresh: true });
        if (account === null) throw new TpError(ErrorCode.NotFound, 'no account at this address', { context: { address } });
        if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM_ID) throw new TpError(ErrorCode.AccountInvalid, `owned by ${account.owner}, not the address lookup table program`);
        const table = decodeLookupTable(address, account.data, account.slot);
        const usable = table.lastExtendedSlot >= account.slot ? table.addresses.slice(0, table.lastExtendedSlotStartIndex) : table.addresses;
        out.push({ address, addresses: usable });
      } catch (err) {
        this.options.logger?.warn({ table: address, err: err instanceof Error ? err.message : String(err) }, 'lookup table left out');
      }
    }
    this.tables = out;
    this.readAt = this.now();
    return out;
  }
}
