import type { Logger } from '../../obs/index.js';
import { LookupTableExtendError, type LookupTableExtension, type LookupTableState } from '../address-lookup-tables.js';
import { HttpError, HttpErrorCode, readJson, sendJson } from './http-io.js';
import type { RouteRegistry } from './router.js';

/**
 * Lookup table admin: the simulator's address lookup tables, and extending one at runtime (to
 * test a client's "index past the table's known length → refetch" path end to end).
 *
 *   GET  /admin/lookup-tables                  → { tables: LookupTableJson[] }
 *   POST /admin/lookup-tables/{table}/extend   ← {"addresses": [base58, ...]} or {"pool": base58}
 *                                               → { table, slot, startIndex, length }
 *
 * An extension lands in the newest slot (last_extended_slot = `slot`): the next getAccountInfo or
 * getMultipleAccounts shows the longer table, and transactions may use the new indexes from the
 * next slot on. `pool` appends that pool's swap accounts (pool, vaults, AmmConfig, arrays).
 * Slots are decimal strings. Errors: 400 for a bad body, a full or deactivated table or an unknown
 * pool; 404 for an address that is not a lookup table.
 */

export const LookupTableAdminPath = {
  Tables: '/admin/lookup-tables',
  Extend: '/admin/lookup-tables/:table/extend',
} as const;

export interface LookupTableAdminBackend {
  lookupTableAddresses(): string[];
  lookupTable(address: string): LookupTableState | null;
  extendLookupTable(table: string, addresses: readonly string[]): LookupTableExtension;
  addPoolToLookupTable(pool: string, table: string): LookupTableExtension;
}

export interface LookupTableJson {
  address: string;
  authority: string | null;
  lastExtendedSlot: string;
  lastExtendedSlotStartIndex: number;
  addresses: string[];
}

const BODY_LIMIT = 64 * 1024;

export function mountLookupTableAdmin(server: RouteRegistry, options: { chain: LookupTableAdminBackend; logger: Logger }): void {
  const { chain, logger } = options;

  server.route('GET', LookupTableAdminPath.Tables, (req, res) => {
    req.resume();
    const tables: LookupTableJson[] = [];
    for (const address of chain.lookupTableAddresses()) {
      const state = chain.lookupTable(address);
      if (state === null) continue;
      tables.push({
        address,
        authority: state.authority,
        lastExtendedSlot: state.lastExtendedSlot.toString(),
        lastExtendedSlotStartIndex: state.lastExtendedSlotStartIndex,
        addresses: [...state.addresses],
      });
    }
    sendJson(res, 200, { tables });
  });

  server.route('POST', LookupTableAdminPath.Extend, async (req, res, ctx) => {
    const table = ctx.params['table'] ?? '';
    const body = await readJson(req, BODY_LIMIT);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, 'body must be an object with "addresses" or "pool"');
    }
    const fields = body as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (key !== 'addresses' && key !== 'pool') throw new HttpError(400, HttpErrorCode.InvalidParameter, `unknown field ${key}; expected addresses or pool`);
    }
    const addresses = fields['addresses'];
    const pool = fields['pool'];
    if ((addresses === undefined) === (pool === undefined)) {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, 'give exactly one of addresses and pool');
    }
    if (addresses !== undefined && (!Array.isArray(addresses) || !addresses.every((a): a is string => typeof a === 'string'))) {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, 'addresses must be an array of base58 strings');
    }
    if (pool !== undefined && typeof pool !== 'string') throw new HttpError(400, HttpErrorCode.InvalidParameter, 'pool must be a base58 string');
    let done: LookupTableExtension;
    try {
      done = typeof pool === 'string' ? chain.addPoolToLookupTable(pool, table) : chain.extendLookupTable(table, addresses as string[]);
    } catch (err) {
      if (!(err instanceof LookupTableExtendError)) throw err;
      const notFound = err.kind === 'missing' || err.kind === 'invalid';
      throw new HttpError(notFound ? 404 : 400, notFound ? HttpErrorCode.NotFound : HttpErrorCode.InvalidParameter, err.message);
    }
    logger.info({ table, startIndex: done.startIndex, length: done.length, slot: done.slot.toString() }, 'lookup table extended');
    sendJson(res, 200, { table: done.table, slot: done.slot.toString(), startIndex: done.startIndex, length: done.length });
  });
}
