import * as grpc from '@grpc/grpc-js';

import { ErrorCode, TpError } from '../../errors.js';
import { createLogger, type Logger } from '../../obs/index.js';
import { encodeAccountUpdate, prepareGeyserCodec } from '../../geyser-codec.js';
import { loadGeyserProto } from '../../proto.js';
import type { AccountRecord } from '../chain-backend.js';
import type { AccountWritesListener, SlotListener } from '../chain-listeners.js';
import { pubkeyBytes } from '../key-cache.js';

/**
 * The simulator's Yellowstone gRPC (Geyser) endpoint: `geyser.Geyser/Subscribe` and `Ping` of
 * proto/geyser.proto, served from the simulated chain's own account writes.
 *
 * Account writes are streamed as the chain applies them, transaction by transaction, while the
 * slot is still being built (as a validator's Yellowstone plugin notifies them during replay): one
 * SubscribeUpdateAccount per written account its filters match (slot: the slot being built, pubkey,
 * lamports, owner, data, write_version: one rising counter over every write, as the validator's;
 * txn_signature: the transaction that wrote it, absent for a direct write such as createPool).
 * When the slot commits, a SubscribeUpdateSlot (slot, parent, SLOT_PROCESSED) follows for the
 * streams that asked for slots. Filters (`accounts`) match by `account` or `owner`; a filter with
 * neither matches every account; the update's `filters` names those that matched. A request written
 * later on the same stream replaces the filters; one with `ping` is answered with `pong{id}`. The
 * server pings each stream every `pingIntervalMs`. `from_slot` replays the kept history (the last
 * `historySlots` committed slots) from that slot, then the writes of the slot being built so far,
 * before the live updates; a slot older than the history is refused with INVALID_ARGUMENT, as
 * Yellowstone refuses one outside its replay buffer.
 *
 * Faults (tests, benches), each taking effect from the next slot whose first write (or commit)
 * comes after the call: `disconnectAll()` ends every stream with UNAVAILABLE (at once);
 * `skipSlots(n)` sends nothing of the next n slots (neither their writes nor their slot updates:
 * a gap; the history keeps them, so a from_slot replay has them); `reorderNext()` holds the account
 * updates of the next slot and sends them when the slot after it commits, after that slot's own
 * writes (older writes arriving after newer ones).
 */

export const GEYSER_DEFAULT_HOST = '127.0.0.1';
export const GEYSER_DEFAULT_PORT = 10000;
const DEFAULT_HISTORY_SLOTS = 512;
const DEFAULT_PING_INTERVAL_MS = 10_000;
const SHUTDOWN_TIMEOUT_MS = 2000;
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const EMPTY = new Uint8Array(0);

/** The chain side the server needs: the simulated chain has both. */
export interface GeyserBackend {
  onAccountWrites(listener: AccountWritesListener): () => void;
  onSlot(listener: SlotListener): () => void;
}

export interface GeyserServerOptions {
  backend: GeyserBackend;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 10000; 0 picks a free port. */
  port?: number;
  /** When set, a call without metadata `x-token` equal to it is refused (UNAUTHENTICATED). */
  xToken?: string;
  /** Slots kept for from_slot. Default 512. */
  historySlots?: number;
  /** Server pings. Default 10 s. */
  pingIntervalMs?: number;
  logger?: Logger;
}

export interface GeyserServerStats {
  subscribers: number;
  /** Accounts named by the filters of the open streams (each stream's filters counted apart). */
  filteredAccounts: number;
  subscribersTotal: number;
  accountUpdatesSent: number;
  slotUpdatesSent: number;
  /** Slots not sent because of skipSlots. */
  slotsSkipped: number;
  /** Slots whose account updates were held and sent after the next slot's (reorderNext). */
  slotsReordered: number;
  disconnects: number;
  pongs: number;
}

interface AccountWrite {
  pubkey: string;
  record: AccountRecord | null;
  writeVersion: bigint;
  /** The writing transaction's signature (64 bytes); undefined for a direct write. */
  signature: Buffer | undefined;
}

interface SlotRecord {
  slot: bigint;
  parent: bigint;
  writes: AccountWrite[];
}

/** What the faults make of a slot: its writes sent live, not at all, or held until the next commit. */
type SlotMode = 'send' | 'skip' | 'hold';

/** The slot the chain is building: its writes so far and what the faults made of it. */
interface SlotInProgress {
  slot: bigint;
  mode: SlotMode;
  writes: AccountWrite[];
}

interface Filter {
  name: string;
  accounts: Set<string>;
  owners: Set<string>;
}

interface Subscriber {
  readonly call: grpc.ServerDuplexStream<SubscribeRequestWire, SubscribeUpdateWire>;
  /**
   * grpc-js's call under the stream (ServerInterceptingCall), when there: every message of the
   * stream is handed to it directly. Through the stream's Writable, a message waits until the
   * previous one reached the socket (one message per turn of the event loop): a transaction's
   * writes went out over several turns and a client saw them in several reads, and refreshed the
   * pool on a part of them. Directly, each message is one write of the HTTP/2 stream; the stream's
   * own Writable still holds every write after the first until the first reached the socket, so
   * the writes of one transaction are corked (`batch`) and leave in one socket write, as a
   * Yellowstone server sends them; their order is the HTTP/2 stream's. Undefined: the public
   * `write` (another grpc-js).
   */
  readonly direct: DirectCall | undefined;
  filters: Filter[];
  slots: boolean;
  /** Live updates start after the replay is written. */
  live: boolean;
}

interface DirectCall {
  sendMessage(message: unknown, callback: (err?: Error | null) => void): void;
  /** The HTTP/2 stream under grpc-js's base call (no interceptors): corked around a batch of messages. */
  stream?: { cork(): void; uncork(): void };
}

function directCallOf(call: grpc.ServerDuplexStream<SubscribeRequestWire, SubscribeUpdateWire>): DirectCall | undefined {
  const inner = (call as unknown as { call?: Partial<DirectCall> }).call;
  if (typeof inner?.sendMessage !== 'function') return undefined;
  const stream = inner.stream;
  const corkable = stream !== undefined && typeof stream.cork === 'function' && typeof stream.uncork === 'function';
  return { sendMessage: inner.sendMessage.bind(inner), ...(corkable ? { stream } : {}) };
}

/** SubscribeRequest as the proto loader gives it (keepCase, u64 as strings). */
interface SubscribeRequestWire {
  accounts?: Record<string, { account?: string[]; owner?: string[] }>;
  slots?: Record<string, unknown>;
  ping?: { id: number } | null;
  from_slot?: string | null;
}

/** An update as proto-loader serializes it, or an account update already encoded (geyser-codec.ts). */
type SubscribeUpdateObject = Record<string, unknown>;
type SubscribeUpdateWire = SubscribeUpdateObject | Buffer;

export class GeyserServer {
  private readonly backend: GeyserBackend;
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly xToken: string | undefined;
  private readonly historySlots: number;
  private readonly pingIntervalMs: number;
  private readonly log: Logger;
  private server: grpc.Server | undefined;
  private boundPort = 0;
  private unsubscribe: (() => void)[] = [];
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly subscribers = new Set<Subscriber>();
  private readonly history: SlotRecord[] = [];
  /** The slot being built (the chain announces each transaction's writes, then commits the slot). */
  private building: SlotInProgress | undefined;
  private writeVersion = 0n;
  private skipping = 0;
  private reorderArmed = false;
  /** A committed slot whose writes reorderNext holds until the next commit. */
  private held: SlotInProgress | undefined;
  private readonly counters: Omit<GeyserServerStats, 'subscribers' | 'filteredAccounts'> = {
    subscribersTotal: 0,
    accountUpdatesSent: 0,
    slotUpdatesSent: 0,
    slotsSkipped: 0,
    slotsReordered: 0,
    disconnects: 0,
    pongs: 0,
  };

  constructor(options: GeyserServerOptions) {
    this.backend = options.backend;
    this.host = options.host ?? GEYSER_DEFAULT_HOST;
    this.requestedPort = options.port ?? GEYSER_DEFAULT_PORT;
    this.xToken = options.xToken;
    this.historySlots = options.historySlots ?? DEFAULT_HISTORY_SLOTS;
    this.pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    this.log = options.logger ?? createLogger({ name: 'sim-geyser' });
    if (!Number.isInteger(this.requestedPort) || this.requestedPort < 0 || this.requestedPort > 65535) {
      throw new TpError(ErrorCode.ConfigInvalid, `port must be in 0..65535, got ${this.requestedPort}`);
    }
  }

  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<number> {
    if (this.server !== undefined) return this.boundPort;
    const proto = loadGeyserProto();
    prepareGeyserCodec();
    const server = new grpc.Server();
    // Account updates are encoded here (geyser-codec.ts) and written as bytes; the rest (slots,
    // pings, pongs) through proto-loader's serializer.
    const subscribe = proto.Geyser.service['Subscribe']!;
    const service = { ...proto.Geyser.service, Subscribe: { ...subscribe, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : subscribe.responseSerialize(v)) } };
    server.addService(service, {
      Subscribe: (call: grpc.ServerDuplexStream<SubscribeRequestWire, SubscribeUpdateWire>) => this.subscribe(call),
      Ping: (call: grpc.ServerUnaryCall<{ count: number }, unknown>, callback: grpc.sendUnaryData<{ count: number }>) => {
        callback(null, { count: call.request.count });
      },
    });
    const address = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.requestedPort}`;
    this.boundPort = await new Promise<number>((resolve, reject) => {
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err !== null) reject(new TpError(ErrorCode.Io, `Geyser gRPC server cannot bind ${address}: ${err.message}`, { cause: err, context: { address } }));
        else resolve(port);
      });
    });
    this.server = server;
    this.unsubscribe = [
      this.backend.onAccountWrites((writes, slot, signature) => this.onWrites(writes, slot, signature)),
      this.backend.onSlot((slot, parent) => this.onSlot(slot, parent)),
    ];
    this.pingTimer = setInterval(() => this.pingAll(), this.pingIntervalMs);
    this.pingTimer.unref();
    this.log.info({ host: this.host, port: this.boundPort }, 'Geyser gRPC server listening');
    return this.boundPort;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    clearInterval(this.pingTimer);
    this.endAll('server shutting down');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, SHUTDOWN_TIMEOUT_MS);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Fault: ends every open stream with UNAVAILABLE; returns how many. */
  disconnectAll(): number {
    const n = this.endAll('stream disconnected (injected fault)');
    this.counters.disconnects += n;
    return n;
  }

  /** Fault: the next `n` slots are not sent to the streams (kept in the history). */
  skipSlots(n: number): void {
    this.skipping += n;
  }

  /** Fault: the next slot's account updates are sent after the following slot's. */
  reorderNext(): void {
    this.reorderArmed = true;
  }

  stats(): GeyserServerStats {
    let filteredAccounts = 0;
    for (const sub of this.subscribers) for (const f of sub.filters) filteredAccounts += f.accounts.size;
    return { subscribers: this.subscribers.size, filteredAccounts, ...this.counters };
  }

  private onWrites(writes: ReadonlyMap<string, AccountRecord | null>, slot: bigint, signature: Uint8Array | undefined): void {
    const txnSignature = signature === undefined ? undefined : Buffer.from(signature);
    const list: AccountWrite[] = [];
    for (const [pubkey, record] of writes) list.push({ pubkey, record, writeVersion: ++this.writeVersion, signature: txnSignature });
    const last = this.history.at(-1);
    if (last !== undefined && last.slot === slot) {
      // A write outside a slot build (createPool, closePool): into the slot already committed.
      last.writes.push(...list);
      this.sendAccounts(list, slot);
      return;
    }
    if (this.building === undefined || this.building.slot !== slot) this.building = { slot, mode: this.modeOfNextSlot(), writes: [] };
    this.building.writes.push(...list);
    if (this.building.mode === 'send') this.sendAccounts(list, slot);
  }

  /** What the armed faults make of the slot that starts now. */
  private modeOfNextSlot(): SlotMode {
    if (this.skipping > 0) {
      this.skipping--;
      this.counters.slotsSkipped++;
      return 'skip';
    }
    if (this.reorderArmed) {
      this.reorderArmed = false;
      this.counters.slotsReordered++;
      return 'hold';
    }
    return 'send';
  }

  private onSlot(slot: bigint, parent: bigint): void {
    const built = this.building !== undefined && this.building.slot === slot ? this.building : { slot, mode: this.modeOfNextSlot(), writes: [] };
    this.building = undefined;
    this.history.push({ slot, parent, writes: built.writes });
    if (this.history.length > this.historySlots) this.history.shift();
    if (built.mode === 'skip') return;
    // The held slot's writes go out after the newer writes of this one, streamed already.
    const held = this.held;
    this.held = undefined;
    if (held !== undefined) this.sendAccounts(held.writes, held.slot);
    if (built.mode === 'hold') this.held = built;
    for (const sub of this.subscribers) if (sub.live && sub.slots) this.write(sub, slotUpdate(slot, parent));
  }

  /** One transaction's writes (or a held slot's): to each stream in one socket write. */
  private sendAccounts(writes: readonly AccountWrite[], slot: bigint): void {
    if (writes.length === 0) return;
    for (const sub of this.subscribers) {
      if (!sub.live) continue;
      batch(sub, () => {
        for (const w of writes) this.sendAccount(sub, w, slot);
      });
    }
  }

  private sendAccount(sub: Subscriber, w: AccountWrite, slot: bigint): void {
    const names = matching(sub.filters, w);
    if (names.length === 0) return;
    this.counters.accountUpdatesSent++;
    this.write(sub, this.accountUpdate(names, w, slot));
  }

  private subscribe(call: grpc.ServerDuplexStream<SubscribeRequestWire, SubscribeUpdateWire>): void {
    if (this.server === undefined) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'server shutting down' });
      return;
    }
    if (this.xToken !== undefined && call.metadata.get('x-token')[0] !== this.xToken) {
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'x-token missing or wrong' });
      return;
    }
    const sub: Subscriber = { call, direct: directCallOf(call), filters: [], slots: false, live: false };
    this.subscribers.add(sub);
    this.counters.subscribersTotal++;
    const leave = (): void => {
      this.subscribers.delete(sub);
    };
    call.on('cancelled', leave);
    call.on('close', leave);
    call.on('error', leave);
    call.on('end', () => {
      leave();
      call.end();
    });
    call.on('data', (request: SubscribeRequestWire) => this.onRequest(sub, request));
  }

  private onRequest(sub: Subscriber, request: SubscribeRequestWire): void {
    if (request.ping !== undefined && request.ping !== null) {
      this.counters.pongs++;
      this.write(sub, { filters: [], pong: { id: request.ping.id } });
      if (isPingOnly(request)) return;
    }
    sub.filters = Object.entries(request.accounts ?? {}).map(([name, f]) => ({
      name,
      accounts: new Set(f.account ?? []),
      owners: new Set(f.owner ?? []),
    }));
    sub.slots = Object.keys(request.slots ?? {}).length > 0;
    if (request.from_slot !== undefined && request.from_slot !== null && !sub.live) {
      const from = BigInt(request.from_slot);
      const first = this.history[0]?.slot;
      if (first === undefined || from < first) {
        sub.call.emit('error', {
          code: grpc.status.INVALID_ARGUMENT,
          details: `broadcast from_slot ${from} is not available, first available ${first ?? 'none'}`,
        });
        this.subscribers.delete(sub);
        return;
      }
      batch(sub, () => {
        for (const record of this.history) {
          if (record.slot < from) continue;
          for (const w of record.writes) this.sendAccount(sub, w, record.slot);
          if (sub.slots) this.write(sub, slotUpdate(record.slot, record.parent));
        }
        // The slot being built: its writes so far (the live ones follow).
        const building = this.building;
        if (building !== undefined && building.mode === 'send') for (const w of building.writes) this.sendAccount(sub, w, building.slot);
      });
    }
    sub.live = true;
  }

  /** A deleted account goes out as Yellowstone sends one: zero lamports, empty data, the system owner. */
  private accountUpdate(filters: string[], w: AccountWrite, slot: bigint): Buffer {
    const r = w.record;
    return encodeAccountUpdate({
      filters,
      slot,
      pubkey: pubkeyBytes(w.pubkey),
      lamports: r?.lamports ?? 0n,
      owner: pubkeyBytes(r?.owner ?? SYSTEM_PROGRAM),
      executable: r?.executable ?? false,
      rentEpoch: r?.rentEpoch ?? 0n,
      data: r?.data ?? EMPTY,
      writeVersion: w.writeVersion,
      txnSignature: w.signature,
      createdAtMs: Date.now(),
    });
  }

  private write(sub: Subscriber, update: SubscribeUpdateWire): void {
    if (!sub.call.writable) return;
    if (!Buffer.isBuffer(update) && update['slot'] !== undefined) this.counters.slotUpdatesSent++;
    const direct = sub.direct;
    if (direct === undefined) sub.call.write(update);
    else direct.sendMessage(update, () => {});
  }

  private pingAll(): void {
    for (const sub of this.subscribers) if (sub.live) this.write(sub, { filters: [], ping: {} });
  }

  private endAll(details: string): number {
    const n = this.subscribers.size;
    for (const sub of [...this.subscribers]) {
      this.subscribers.delete(sub);
      sub.call.emit('error', { code: grpc.status.UNAVAILABLE, details });
    }
    return n;
  }
}

/** Runs `send` with `sub`'s HTTP/2 stream corked: the messages it writes leave in one socket write. */
function batch(sub: Subscriber, send: () => void): void {
  const stream = sub.direct?.stream;
  if (stream === undefined) {
    send();
    return;
  }
  stream.cork();
  try {
    send();
  } finally {
    stream.uncork();
  }
}

function isPingOnly(request: SubscribeRequestWire): boolean {
  return Object.keys(request.accounts ?? {}).length === 0 && Object.keys(request.slots ?? {}).length === 0;
}

function matching(filters: readonly Filter[], w: AccountWrite): string[] {
  const names: string[] = [];
  for (const f of filters) {
    if (f.accounts.size === 0 && f.owners.size === 0) names.push(f.name);
    else if (f.accounts.has(w.pubkey) || (w.record !== null && f.owners.has(w.record.owner))) names.push(f.name);
  }
  return names;
}

function slotUpdate(slot: bigint, parent: bigint): SubscribeUpdateObject {
  return { filters: ['slots'], slot: { slot: slot.toString(), parent: parent.toString(), status: 'SLOT_PROCESSED' }, created_at: timestampNow() };
}

function timestampNow(): { seconds: string; nanos: number } {
  const ms = Date.now();
  return { seconds: Math.floor(ms / 1000).toString(), nanos: (ms % 1000) * 1_000_000 };
}
