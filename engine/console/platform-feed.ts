/**
 * What the console shows of the trading platform's state (spec 03), read from its stores:
 * - trades: the newest rows of `trades`, with status and expected / actual profit;
 * - paper trading and backtests: the `trades` rows with status `paper`, and their cumulative
 *   profit over time (the PnL chart);
 * - wallets by tier: `wallets` rows, each token's expected and actual balance, the live values of
 *   `wallet:balance:{address}:{token}` when the key-value store holds them, and the newest
 *   rebalancing transfers (`wallet_transfers`).
 * All reads are bounded (LIMIT) and never write.
 */
import type { KeySpace, SqlClient } from '../state/index.js';
import { WalletRepository } from '../wallets/index.js';

export const TRADE_ROWS = 100;
export const PAPER_ROWS = 1_000;
export const TRANSFER_ROWS = 50;

export interface TradeRow {
  id: string;
  strategy: string | null;
  status: string | null;
  signature: string | null;
  /** Atoms as decimal strings (bigint columns). */
  expectedProfit: string | null;
  actualProfit: string | null;
  error: string | null;
  createdAt: number | null;
  confirmedAt: number | null;
  slot: string | null;
}

export interface PnlPoint {
  t: number;
  /** Cumulative profit in atoms, as a number (a chart's y value; rounding beyond 2^53 is harmless there). */
  cumulative: number;
}

export interface WalletBalanceRow {
  token: string;
  expected: string | null;
  actual: string | null;
  /** Where `actual` came from: the live `wallet:balance:` key, or the `wallets` row. */
  source: 'kv' | 'table';
  /** actual / expected below 0.5 (a top-up is due) or above 1.5 (a return is due). */
  outOfBand: boolean;
}

export interface WalletRow {
  address: string;
  tier: string;
  enabled: boolean;
  lastSync: number | null;
  balances: WalletBalanceRow[];
}

export interface TransferRow {
  signature: string;
  from: string;
  to: string;
  token: string;
  amount: string;
  reason: string;
  status: string;
  createdAt: number | null;
}

export interface PlatformView {
  /** False while there is no database (the UI says so). */
  database: boolean;
  trades: TradeRow[];
  paper: { trades: TradeRow[]; pnl: PnlPoint[] };
  wallets: WalletRow[];
  transfers: TransferRow[];
  /** Why a part could not be read (a missing table on an older schema, a database error). */
  errors: string[];
}

export const EMPTY_PLATFORM_VIEW: PlatformView = { database: false, trades: [], paper: { trades: [], pnl: [] }, wallets: [], transfers: [], errors: [] };

interface TradeDbRow {
  id: string;
  strategy: string | null;
  status: string | null;
  signature: string | null;
  expected_profit: bigint | null;
  actual_profit: bigint | null;
  error_message: string | null;
  created_at: Date | null;
  confirmed_at: Date | null;
  slot: bigint | null;
}

const TRADE_COLUMNS = 'id, strategy, status, signature, expected_profit, actual_profit, error_message, created_at, confirmed_at, slot';

const str = (v: bigint | number | string | null | undefined): string | null => (v === null || v === undefined ? null : v.toString());
const ms = (d: Date | null | undefined): number | null => (d instanceof Date ? d.getTime() : null);

function toTrade(r: TradeDbRow): TradeRow {
  return {
    id: r.id,
    strategy: r.strategy,
    status: r.status,
    signature: r.signature,
    expectedProfit: str(r.expected_profit),
    actualProfit: str(r.actual_profit),
    error: r.error_message,
    createdAt: ms(r.created_at),
    confirmedAt: ms(r.confirmed_at),
    slot: str(r.slot),
  };
}

/** Cumulative profit of paper trades in time order: actual profit when known, else expected. */
export function paperPnl(trades: readonly TradeRow[]): PnlPoint[] {
  const ordered = trades.filter((t) => t.createdAt !== null).sort((a, b) => a.createdAt! - b.createdAt!);
  let total = 0n;
  return ordered.map((t) => {
    total += BigInt(t.actualProfit ?? t.expectedProfit ?? '0');
    return { t: t.createdAt!, cumulative: Number(total) };
  });
}

function outOfBand(expected: string | null, actual: string | null): boolean {
  if (expected === null || actual === null) return false;
  const e = BigInt(expected);
  if (e === 0n) return false;
  const a = BigInt(actual);
  return a * 2n < e || a * 2n > e * 3n;
}

export interface PlatformFeedOptions {
  db: () => SqlClient | undefined;
  keys?: KeySpace | undefined;
}

/** Reads the platform view; a part that fails is left empty and its error listed. Never throws. */
export async function readPlatformView(options: PlatformFeedOptions): Promise<PlatformView> {
  const db = options.db();
  if (db === undefined) return EMPTY_PLATFORM_VIEW;
  const errors: string[] = [];
  const part = async <T>(what: string, read: () => Promise<T>, empty: T): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      errors.push(`${what}: ${(err as Error).message}`);
      return empty;
    }
  };
  const trades = await part(
    'trades',
    async () => (await db.query<TradeDbRow>(`SELECT ${TRADE_COLUMNS} FROM trades WHERE status IS DISTINCT FROM 'paper' ORDER BY created_at DESC LIMIT ${TRADE_ROWS}`)).map(toTrade),
    [] as TradeRow[],
  );
  const paperTrades = await part(
    'paper trades',
    async () => (await db.query<TradeDbRow>(`SELECT ${TRADE_COLUMNS} FROM trades WHERE status = 'paper' ORDER BY created_at DESC LIMIT ${PAPER_ROWS}`)).map(toTrade),
    [] as TradeRow[],
  );
  const wallets = await part('wallets', () => readWallets(db, options.keys), [] as WalletRow[]);
  const transfers = await part(
    'wallet transfers',
    async () =>
      (
        await db.query<{ signature: string; from_address: string; to_address: string; token: string; amount: string; reason: string; status: string; created_at: Date | null }>(
          `SELECT t.signature, f.address AS from_address, w.address AS to_address, t.token, t.amount, t.reason, t.status, t.created_at
             FROM wallet_transfers t JOIN wallets f ON f.id = t.from_wallet_id JOIN wallets w ON w.id = t.to_wallet_id
            ORDER BY t.created_at DESC LIMIT ${TRANSFER_ROWS}`,
        )
      ).map((r) => ({ signature: r.signature, from: r.from_address, to: r.to_address, token: r.token, amount: String(r.amount), reason: r.reason, status: r.status, createdAt: ms(r.created_at) })),
    [] as TransferRow[],
  );
  return { database: true, trades, paper: { trades: paperTrades.slice(0, TRADE_ROWS), pnl: paperPnl(paperTrades) }, wallets, transfers, errors };
}

async function readWallets(db: SqlClient, keys: KeySpace | undefined): Promise<WalletRow[]> {
  const records = await new WalletRepository(db).list();
  const out: WalletRow[] = [];
  for (const w of records) {
    const tokens = [...new Set([...w.expectedBalance.keys(), ...w.actualBalance.keys()])].sort();
    const balances: WalletBalanceRow[] = [];
    for (const token of tokens) {
      const live = keys === undefined ? null : await keys.getWalletBalance(w.address, token).catch(() => null);
      const expected = live?.expected ?? str(w.expectedBalance.get(token));
      const actual = live?.actual ?? str(w.actualBalance.get(token));
      balances.push({ token, expected, actual, source: live === null ? 'table' : 'kv', outOfBand: outOfBand(expected, actual) });
    }
    out.push({ address: w.address, tier: w.tier, enabled: w.enabled, lastSync: ms(w.lastSync), balances });
  }
  const order = ['treasure', 'controller', 'proxy', 'worker'];
  return out.sort((a, b) => order.indexOf(a.tier) - order.indexOf(b.tier));
}
