/**
 * The account-stream state source: a Yellowstone gRPC (Geyser) `Subscribe` client that keeps the
 * newest state of a set of accounts (pools, vaults, tick or bin arrays, configs).
 *
 * Ordering. Each account's state carries (slot, write_version); an update is applied only when
 * that pair is newer than the one held (slot first, then write version), so an older write that
 * arrives late (reordered, or replayed after a reconnect) never replaces a newer one. A state read
 * over RPC at context slot S counts as the last write of S (write version +∞ within S).
 *
 * Reconnect. A stream that ends or fails is opened again after `reconnectDelayMs`, with
 * `from_slot` = the last slot seen, so the server replays what was missed (duplicates are dropped
 * by the rule above).
 *
 * Gaps. The client subscribes to slots; a slot update whose parent is newer than the last slot
 * seen means slots were missed (their account updates with them): the held accounts are read again
 * with one getMultipleAccounts (`readAccounts`, up to 100 keys per call) and applied by the rule.
 *
 * Every applied change is reported to `onUpdate` (address, slot, write version, from RPC or the
 * stream, and the writing transaction's signature when the stream names it: txn_signature): the
 * scanner's pool-update path takes it from there.
 */
import * as grpc from '@grpc/grpc-js';

import { base58 } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { createLogger, type Logger } from '../obs/index.js';
import { decodeGeyserUpdate, prepareGeyserCodec, type GeyserUpdate } from '../geyser-codec.js';
import { loadGeyserProto } from '../proto.js';
import { MAX_KEYS_PER_CALL, type AccountData, type MultipleAccountsResult } from '../rpc/index.js';

/** A held account: its data with the slot and write version it was written at. */
export interface StreamedAccount {
  account: AccountData | null;
  slot: bigint;
  writeVersion: bigint;
}

export interface AccountUpdate {
  address: string;
  account: AccountData | null;
  slot: bigint;
  writeVersion: bigint;
  source: 'stream' | 'rpc';
  /** The writing transaction's signature (64 bytes), when the stream names it (txn_signature). */
  signature?: Uint8Array;
}

export interface GeyserStreamOptions {
  /** host:port of the Yellowstone endpoint. */
  endpoint: string;
  /** Sent as metadata `x-token` when set. */
  xToken?: string;
  /** Account addresses to follow. */
  accounts: readonly string[];
  /** Program ids whose every account to follow. Default none. */
  owners?: readonly string[];
  /** One getMultipleAccounts (≤ 100 keys): the gap heal. */
  readAccounts: (addresses: readonly string[]) => Promise<MultipleAccountsResult>;
  onUpdate?: (update: AccountUpdate) => void;
  /** Every slot the stream reports (after the gap check): the scanner's slot clock and liveness. */
  onSlot?: (slot: bigint) => void;
  /** Delay before reopening a stream. Default 250 ms. */
  reconnectDelayMs?: number;
  logger?: Logger;
}

export interface GeyserStreamStats {
  connects: number;
  disconnects: number;
  accountUpdates: number;
  /** Updates not applied: not newer than the state held. */
  staleUpdates: number;
  /** Applied updates that came with new bytes equal to the held ones (the held bytes object kept). */
  unchangedBytes: number;
  gaps: number;
  healReads: number;
  healFailures: number;
  pongs: number;
}

/**
 * The HTTP/2 flow-control window the client grants the server, per stream and for the connection
 * (grpc-js `grpc-node.flow_control_window`; default 64 KiB). grpc-js takes one message off the
 * stream per turn of the event loop and Node acknowledges data only as it is taken, so under flow
 * (tick and bin arrays of 10 KiB, a burst per slot piece) a 64 KiB window kept the server waiting
 * for WINDOW_UPDATEs most of the time, with hundreds of KiB queued behind it (the simulator at
 * 2,000 tx/s: the send window under 20 KiB in 65% of samples, up to 694 KiB queued), and every
 * update waited its turn behind that queue. Yellowstone clients open windows of megabytes.
 */
export const GEYSER_FLOW_CONTROL_WINDOW = 8 * 1024 * 1024;

/** Write version that makes an RPC read the last write of its slot. */
export const RPC_WRITE_VERSION = (1n << 64n) - 1n;

export class GeyserAccountStream {
  readonly stats: GeyserStreamStats = { connects: 0, disconnects: 0, accountUpdates: 0, staleUpdates: 0, unchangedBytes: 0, gaps: 0, healReads: 0, healFailures: 0, pongs: 0 };
  private readonly options: GeyserStreamOptions;
  private readonly log: Logger;
  private readonly held = new Map<string, StreamedAccount>();
  private accounts: string[];
  private client: grpc.Client | undefined;
  private call: grpc.ClientDuplexStream<unknown, GeyserUpdate> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastSlot = 0n;
  private healing: Promise<void> | undefined;
  private pingId = 0;
  private filterWriteScheduled = false;

  constructor(options: GeyserStreamOptions) {
    this.options = options;
    this.accounts = [...options.accounts];
    this.log = options.logger ?? createLogger({ name: 'geyser-stream' });
  }

  /** Highest slot seen on the stream. */
  get slot(): bigint {
    return this.lastSlot;
  }

  get connected(): boolean {
    return this.call !== undefined;
  }

  /** How many accounts the subscription follows (its `account` filter). */
  get followedAccounts(): number {
    return this.accounts.length;
  }

  /** The held state of `address`, or undefined when none arrived yet. */
  get(address: string): StreamedAccount | undefined {
    return this.held.get(address);
  }

  start(): void {
    if (this.client !== undefined || this.closed) return;
    const proto = loadGeyserProto();
    prepareGeyserCodec();
    this.client = new proto.Geyser(this.options.endpoint, grpc.credentials.createInsecure(), { 'grpc-node.flow_control_window': GEYSER_FLOW_CONTROL_WINDOW });
    this.open();
  }

  /**
   * Replaces the followed accounts (written on the open stream; Yellowstone replaces the filters).
   * The calls of one turn of the event loop go out as one request (a pool's first load follows its
   * accounts one by one: one request each would queue dozens of growing filters on the stream).
   */
  setAccounts(accounts: readonly string[]): void {
    this.accounts = [...accounts];
    if (this.filterWriteScheduled) return;
    this.filterWriteScheduled = true;
    setImmediate(() => {
      this.filterWriteScheduled = false;
      this.call?.write(this.request(undefined));
    });
  }

  /** Sends a ping; the pong is counted in stats.pongs. */
  ping(): void {
    this.call?.write({ ping: { id: ++this.pingId } });
  }

  /** Applies `update` if newer than what is held; returns whether it was. */
  apply(update: AccountUpdate): boolean {
    const have = this.held.get(update.address);
    if (have !== undefined && (update.slot < have.slot || (update.slot === have.slot && update.writeVersion <= have.writeVersion))) {
      this.stats.staleUpdates++;
      return false;
    }
    const account = sameBytesAs(have?.account, update.account);
    if (account !== update.account) {
      this.stats.unchangedBytes++;
      update = { ...update, account };
    }
    this.held.set(update.address, { account, slot: update.slot, writeVersion: update.writeVersion });
    this.options.onUpdate?.(update);
    return true;
  }

  /** Reads every followed account once over RPC (one call per 100 keys) and applies the answers. */
  async heal(): Promise<void> {
    const addresses = this.accounts;
    for (let i = 0; i < addresses.length; i += MAX_KEYS_PER_CALL) {
      const chunk = addresses.slice(i, i + MAX_KEYS_PER_CALL);
      this.stats.healReads++;
      let result: MultipleAccountsResult;
      try {
        result = await this.options.readAccounts(chunk);
      } catch (err) {
        this.stats.healFailures++;
        this.log.warn({ err, accounts: chunk.length }, 'gap heal read failed');
        continue;
      }
      chunk.forEach((address, k) => {
        this.apply({ address, account: result.accounts[k] ?? null, slot: result.slot, writeVersion: RPC_WRITE_VERSION, source: 'rpc' });
      });
    }
  }

  /** Resolves when the gap heal in progress (if any) is done. */
  async idle(): Promise<void> {
    await this.healing;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.call?.cancel();
    this.call = undefined;
    this.client?.close();
    this.client = undefined;
    await this.healing;
  }

  private request(fromSlot: bigint | undefined): Record<string, unknown> {
    return {
      accounts: { tidepool: { account: this.accounts, owner: [...(this.options.owners ?? [])] } },
      slots: { slots: {} },
      commitment: 'PROCESSED',
      ...(fromSlot !== undefined ? { from_slot: fromSlot.toString() } : {}),
    };
  }

  private open(): void {
    if (this.closed || this.client === undefined) return;
    const metadata = new grpc.Metadata();
    if (this.options.xToken !== undefined) metadata.set('x-token', this.options.xToken);
    const call = this.client.makeBidiStreamRequest(
      '/geyser.Geyser/Subscribe',
      (v: unknown) => loadGeyserProto().Geyser.service['Subscribe']!.requestSerialize(v),
      // Decoded by protobufjs's codec alone (geyser-codec.ts): no plain-object conversion per update.
      decodeGeyserUpdate,
      metadata,
    );
    this.call = call;
    this.stats.connects++;
    call.on('data', (u: GeyserUpdate) => this.onData(u));
    const lost = (err?: grpc.ServiceError): void => {
      if (this.call !== call) return;
      this.call = undefined;
      this.stats.disconnects++;
      if (this.closed) return;
      if (err?.code === grpc.status.UNAUTHENTICATED || err?.code === grpc.status.INVALID_ARGUMENT) {
        this.log.error({ code: err.code, details: err.details }, 'Geyser subscription refused');
        if (err.code === grpc.status.UNAUTHENTICATED) return;
        // from_slot outside the server's replay: resubscribe live and heal over RPC.
        this.lastSlot = 0n;
        this.startHeal();
      }
      this.log.warn({ details: err?.details, fromSlot: this.lastSlot.toString() }, 'Geyser stream lost: reconnecting');
      this.timer = setTimeout(() => this.open(), this.options.reconnectDelayMs ?? 250);
    };
    call.on('error', lost);
    call.on('end', () => lost());
    call.write(this.request(this.lastSlot > 0n ? this.lastSlot : undefined));
  }

  private onData(u: GeyserUpdate): void {
    if (u.kind === 'account') {
      this.stats.accountUpdates++;
      const account: AccountData | null =
        u.lamports === 0n && u.data.length === 0 ? null : { data: u.data, owner: base58.encode(u.owner), lamports: u.lamports, executable: u.executable, slot: u.slot };
      const update: AccountUpdate = { address: base58.encode(u.pubkey), account, slot: u.slot, writeVersion: u.writeVersion, source: 'stream' };
      if (u.txnSignature !== undefined && u.txnSignature.length === 64) update.signature = u.txnSignature;
      this.apply(update);
    } else if (u.kind === 'slot') {
      const { slot, parent } = u;
      if (this.lastSlot > 0n && parent !== undefined && parent > this.lastSlot) {
        this.stats.gaps++;
        this.log.warn({ lastSlot: this.lastSlot.toString(), slot: slot.toString(), parent: parent.toString() }, 'Geyser stream gap: healing with one RPC read');
        this.startHeal();
      }
      if (slot > this.lastSlot) this.lastSlot = slot;
      this.options.onSlot?.(slot);
    } else if (u.kind === 'pong') {
      this.stats.pongs++;
    }
  }

  private startHeal(): void {
    const previous = this.healing ?? Promise.resolve();
    this.healing = previous.then(() => this.heal());
  }
}

/** Refuses an endpoint that is not host:port. */
export function checkGeyserEndpoint(endpoint: string): void {
  if (!/^[^\s:]+:\d{1,5}$/.test(endpoint) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(endpoint)) {
    throw new TpError(ErrorCode.ConfigInvalid, `geyser endpoint must be host:port, got ${JSON.stringify(endpoint)}`);
  }
}

/**
 * `next`, or when its bytes equal the held account's, `next` with the held bytes object: a write
 * that changed nothing of an account (a chain notifies every writable account of a transaction,
 * changed or not) keeps the object its readers know, so the pool loader's per-object digest is
 * reused instead of hashing the same bytes again (a tick or bin array is 10 KiB; equal digests
 * already kept the decode), and the new message's buffer is not retained.
 */
function sameBytesAs(held: AccountData | null | undefined, next: AccountData | null): AccountData | null {
  if (held === null || held === undefined || next === null || held.data === next.data) return next;
  if (!Buffer.from(held.data.buffer, held.data.byteOffset, held.data.byteLength).equals(next.data)) return next;
  return { ...next, data: held.data };
}
