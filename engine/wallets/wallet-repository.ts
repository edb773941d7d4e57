import { ErrorCode, TpError } from '../errors.js';
import type { SqlClient, SqlQueryable } from '../state/index.js';

/**
 * The `wallets`, `wallet_transactions` and `wallet_transfers` tables. Balances are maps of token
 * (a mint, or `SOL` for native lamports) to atoms, stored as JSONB of decimal strings and read
 * back as bigint. The encrypted key is read only by `sealedKey` (to sign) and never by listings.
 */

export const WalletTier = { Treasure: 'treasure', Controller: 'controller', Proxy: 'proxy', Worker: 'worker' } as const;
export type WalletTier = (typeof WalletTier)[keyof typeof WalletTier];
export const WALLET_TIERS: readonly WalletTier[] = Object.values(WalletTier);

/** The token name of native lamports in balances and `wallet:balance:` keys. */
export const NATIVE_SOL = 'SOL';

export type Balances = Map<string, bigint>;

/** A wallet as the platform shows it: no key material. */
export interface WalletRecord {
  id: string;
  tier: WalletTier;
  address: string;
  expectedBalance: Balances;
  actualBalance: Balances;
  lastSync: Date | null;
  enabled: boolean;
  createdAt: Date;
}

export type TransferReason = 'top_up' | 'return_excess';
export type TransferStatus = 'signed' | 'confirmed' | 'failed' | 'expired';

export interface TransferRecord {
  id: string;
  signature: string;
  fromWalletId: string;
  toWalletId: string;
  token: string;
  amount: bigint;
  reason: TransferReason;
  /** Signed transaction, base64. */
  transaction: string;
  lastValidBlockHeight: bigint;
  status: TransferStatus;
  slot: bigint | null;
  error: string | null;
}

const U64_MAX = (1n << 64n) - 1n;

export function parseTier(value: string): WalletTier {
  if ((WALLET_TIERS as readonly string[]).includes(value)) return value as WalletTier;
  throw new TpError(ErrorCode.WalletInvalid, `unknown wallet tier ${JSON.stringify(value)}; expected one of ${WALLET_TIERS.join(', ')}`, { context: { tier: value } });
}

/** JSONB {token: "atoms"} → Map; refuses anything but u64 decimal strings. */
export function balancesFromJson(json: unknown, what: string): Balances {
  const out: Balances = new Map();
  if (json === null || json === undefined) return out;
  if (typeof json !== 'object' || Array.isArray(json)) throw new TpError(ErrorCode.WalletInvalid, `${what} is not an object`, { context: { field: what } });
  for (const [token, v] of Object.entries(json as Record<string, unknown>)) {
    if (typeof v !== 'string' || !/^\d{1,20}$/.test(v) || BigInt(v) > U64_MAX) {
      throw new TpError(ErrorCode.WalletInvalid, `${what}.${token} is not a u64 decimal string`, { context: { field: `${what}.${token}` } });
    }
    out.set(token, BigInt(v));
  }
  return out;
}

export function balancesToJson(balances: Balances): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [token, amount] of [...balances].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[token] = amount.toString();
  return out;
}

interface WalletRow {
  id: string;
  tier: string;
  address: string;
  expected_balance: unknown;
  actual_balance: unknown;
  last_sync: Date | null;
  enabled: boolean | null;
  created_at: Date;
}

const WALLET_COLUMNS = 'id, tier, address, expected_balance, actual_balance, last_sync, enabled, created_at';

function toWallet(r: WalletRow): WalletRecord {
  return {
    id: r.id,
    tier: parseTier(r.tier),
    address: r.address,
    expectedBalance: balancesFromJson(r.expected_balance, `wallet ${r.address} expected_balance`),
    actualBalance: balancesFromJson(r.actual_balance, `wallet ${r.address} actual_balance`),
    lastSync: r.last_sync,
    enabled: r.enabled !== false,
    createdAt: r.created_at,
  };
}

interface TransferRow {
  id: string;
  signature: string;
  from_wallet_id: string;
  to_wallet_id: string;
  token: string;
  amount: string;
  reason: TransferReason;
  transaction: string;
  last_valid_block_height: bigint;
  status: TransferStatus;
  slot: bigint | null;
  error: string | null;
}

function toTransfer(r: TransferRow): TransferRecord {
  return {
    id: r.id,
    signature: r.signature,
    fromWalletId: r.from_wallet_id,
    toWalletId: r.to_wallet_id,
    token: r.token,
    amount: BigInt(r.amount),
    reason: r.reason,
    transaction: r.transaction,
    lastValidBlockHeight: r.last_valid_block_height,
    status: r.status,
    slot: r.slot,
    error: r.error,
  };
}

export class WalletRepository {
  constructor(private readonly db: SqlClient) {}

  /** Inserts a wallet; TP_ERR_WALLET_INVALID when the address is already there. */
  async insert(input: { tier: WalletTier; address: string; encryptedPrivateKey: string; expectedBalance?: Balances }): Promise<WalletRecord> {
    try {
      const rows = await this.db.query<WalletRow>(
        `INSERT INTO wallets (tier, address, encrypted_private_key, expected_balance) VALUES ($1, $2, $3, $4) RETURNING ${WALLET_COLUMNS}`,
        [input.tier, input.address, input.encryptedPrivateKey, balancesToJson(input.expectedBalance ?? new Map())],
      );
      return toWallet(rows[0]!);
    } catch (err) {
      if ((err as { code?: unknown }).code === '23505') {
        throw new TpError(ErrorCode.WalletInvalid, `wallet ${input.address} is already registered`, { cause: err, context: { address: input.address } });
      }
      throw err;
    }
  }

  async list(filter: { tier?: WalletTier; enabled?: boolean } = {}): Promise<WalletRecord[]> {
    const rows = await this.db.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM wallets WHERE ($1::text IS NULL OR tier = $1) AND ($2::boolean IS NULL OR enabled IS NOT DISTINCT FROM $2)
       ORDER BY created_at, address`,
      [filter.tier ?? null, filter.enabled ?? null],
    );
    return rows.map(toWallet);
  }

  async byAddress(address: string): Promise<WalletRecord | null> {
    const rows = await this.db.query<WalletRow>(`SELECT ${WALLET_COLUMNS} FROM wallets WHERE address = $1`, [address]);
    return rows[0] === undefined ? null : toWallet(rows[0]);
  }

  async byId(id: string): Promise<WalletRecord | null> {
    const rows = await this.db.query<WalletRow>(`SELECT ${WALLET_COLUMNS} FROM wallets WHERE id = $1`, [id]);
    return rows[0] === undefined ? null : toWallet(rows[0]);
  }

  /** The sealed key of one wallet, to be opened only to sign. */
  async sealedKey(id: string): Promise<string> {
    const rows = await this.db.query<{ encrypted_private_key: string }>('SELECT encrypted_private_key FROM wallets WHERE id = $1', [id]);
    if (rows[0] === undefined) throw new TpError(ErrorCode.WalletInvalid, `no wallet ${id}`, { context: { id } });
    return rows[0].encrypted_private_key;
  }

  /** Sets (or with null removes) the expected balance of one token. */
  async setExpected(address: string, token: string, amount: bigint | null): Promise<WalletRecord> {
    if (amount !== null && (amount < 0n || amount > U64_MAX)) throw new TpError(ErrorCode.WalletInvalid, `expected balance ${amount} is not a u64`, { context: { address, token } });
    const rows = await this.db.query<WalletRow>(
      amount === null
        ? `UPDATE wallets SET expected_balance = coalesce(expected_balance, '{}'::jsonb) - $2 WHERE address = $1 RETURNING ${WALLET_COLUMNS}`
        : `UPDATE wallets SET expected_balance = coalesce(expected_balance, '{}'::jsonb) || jsonb_build_object($2::text, $3::text) WHERE address = $1 RETURNING ${WALLET_COLUMNS}`,
      amount === null ? [address, token] : [address, token, amount.toString()],
    );
    if (rows[0] === undefined) throw new TpError(ErrorCode.WalletInvalid, `no wallet ${address}`, { context: { address } });
    return toWallet(rows[0]);
  }

  async setEnabled(address: string, enabled: boolean): Promise<void> {
    await this.db.query('UPDATE wallets SET enabled = $2 WHERE address = $1', [address, enabled]);
  }

  /** Stores what the chain holds for a wallet, and when it was read. */
  async recordSync(id: string, actual: Balances, at: Date): Promise<void> {
    await this.db.query('UPDATE wallets SET actual_balance = $2, last_sync = $3 WHERE id = $1', [id, balancesToJson(actual), at]);
  }

  // ---- the transfer journal (schemas/sql/003_wallet_transfers.sql)

  async journalTransfer(t: Omit<TransferRecord, 'id' | 'status' | 'slot' | 'error'>): Promise<TransferRecord> {
    const rows = await this.db.query<TransferRow>(
      `INSERT INTO wallet_transfers (signature, from_wallet_id, to_wallet_id, token, amount, reason, transaction, last_valid_block_height)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [t.signature, t.fromWalletId, t.toWalletId, t.token, t.amount.toString(), t.reason, t.transaction, t.lastValidBlockHeight],
    );
    return toTransfer(rows[0]!);
  }

  async openTransfers(): Promise<TransferRecord[]> {
    const rows = await this.db.query<TransferRow>("SELECT * FROM wallet_transfers WHERE status = 'signed' ORDER BY created_at");
    return rows.map(toTransfer);
  }

  async transfers(limit = 100): Promise<TransferRecord[]> {
    const rows = await this.db.query<TransferRow>('SELECT * FROM wallet_transfers ORDER BY created_at DESC LIMIT $1', [limit]);
    return rows.map(toTransfer);
  }

  /** Ends a transfer that did not land (failed on chain, or expired unseen). */
  async closeTransfer(id: string, status: 'failed' | 'expired', error: string): Promise<void> {
    await this.db.query("UPDATE wallet_transfers SET status = $2, error = $3, updated_at = now() WHERE id = $1 AND status = 'signed'", [id, status, error]);
  }

  /**
   * A transfer that landed: in one database transaction, one wallet_transactions row per wallet
   * (−amount for the sender, +amount for the receiver) and the journal row marked confirmed.
   * Doing it twice changes nothing.
   */
  async confirmTransfer(t: TransferRecord, slot: bigint): Promise<void> {
    await this.db.transaction(async (tx: SqlQueryable) => {
      const insert = `INSERT INTO wallet_transactions (wallet_id, signature, amount, token) VALUES ($1, $2, $3, $4)
                      ON CONFLICT (wallet_id, signature) DO NOTHING`;
      await tx.query(insert, [t.fromWalletId, t.signature, (-t.amount).toString(), t.token]);
      await tx.query(insert, [t.toWalletId, t.signature, t.amount.toString(), t.token]);
      await tx.query("UPDATE wallet_transfers SET status = 'confirmed', slot = $2, error = NULL, updated_at = now() WHERE id = $1", [t.id, slot]);
    });
  }

  /** wallet_transactions of a wallet, newest first. */
  async transactions(walletId: string): Promise<{ signature: string; amount: bigint; token: string; timestamp: Date }[]> {
    const rows = await this.db.query<{ signature: string; amount: string; token: string; timestamp: Date }>(
      'SELECT signature, amount::text AS amount, token, "timestamp" FROM wallet_transactions WHERE wallet_id = $1 ORDER BY "timestamp" DESC, signature',
      [walletId],
    );
    return rows.map((r) => ({ signature: r.signature, amount: BigInt(r.amount), token: r.token, timestamp: r.timestamp }));
  }
}
