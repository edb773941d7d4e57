/**
 * JetStream publishes pipelined on one connection: every publish goes out at once as a core NATS
 * publish whose reply subject is a token under one inbox this pipeline subscribes to, and the
 * stream's acknowledgement (a PubAck, or an error) comes back there. Nothing waits for one ack
 * before the next publish, and each publish still learns its own outcome.
 *
 *   publish(subject, data, msgId) ──HPUB subject _INBOX.x.<token> {Nats-Msg-Id}──▶ stream
 *        ▲                                                                         │
 *        └── pending[token] ◀── onAck ◀── _INBOX.x.* (one subscription) ◀── PubAck ┘
 *
 * What `JetStreamClient.publish` does per message and this does not: a request object with its own
 * timer, two Error objects for async stack traces (one of them on success), a generator step and a
 * promise chain per hop. Here a publish costs the headers, one promise and a map entry; one timer
 * serves every deadline (all publishes share the timeout, so the map's insertion order is the
 * deadline order and the sweep stops at the first entry not yet due).
 *
 * Guaranteed delivery (spec 02) is unchanged: a publish resolves only on the stream's ack. A lost
 * ack (timeout) or an error ack is retried, up to `retries` more times, with the same message id,
 * so the stream's duplicate window drops a second copy; a retry keeps its token, so whichever ack
 * of the message arrives first settles it. "No responders" (no stream takes the subject) and a bus
 * that is not connected fail at once, as a retry would fail the same way.
 */
import { createInbox, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type NatsError, type Subscription } from 'nats';

import { ErrorCode, TpError } from '../errors.js';

/** What the pipeline needs of the bus connection. */
export interface PipelineBus {
  /** The client, once connected (the same object across reconnects). */
  readonly connection: NatsConnection | undefined;
  readonly connected: boolean;
  readonly status: string;
}

export interface JetStreamPipelineOptions {
  bus: PipelineBus;
  /** Wait for each ack, ms. */
  timeoutMs: number;
  /** Extra attempts after a lost or error ack, same message id. */
  retries: number;
  /** The stream the acks must come from (`Nats-Expected-Stream`); default any. */
  expectStream?: string;
}

/** The stream's acknowledgement of one message. */
export interface PublishAck {
  stream: string;
  seq: number;
  /** The stream already held this message id (a retried or repeated publish). */
  duplicate: boolean;
}

interface Pending {
  token: string;
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs;
  msgId: string;
  /** 0 for the first send. */
  attempt: number;
  /** performance.now() past which the ack is taken as lost. */
  deadline: number;
  resolve: (ack: PublishAck) => void;
  reject: (err: TpError) => void;
}

/** JetStream's message id and expected-stream headers. */
const MSG_ID_HEADER = 'Nats-Msg-Id';
const EXPECTED_STREAM_HEADER = 'Nats-Expected-Stream';
const NO_RESPONDERS = 503;

export class JetStreamPipeline {
  private readonly bus: PipelineBus;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly expectStream: string | undefined;
  /** Publishes awaiting their ack, by token, in deadline order. */
  private readonly pending = new Map<string, Pending>();
  private readonly decoder = new TextDecoder();
  private nc: NatsConnection | undefined;
  private sub: Subscription | undefined;
  /** `_INBOX.<nuid>.`: a token appended is a reply subject. */
  private prefix = '';
  private nextToken = 0;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  /** Retries sent (each extra attempt of a message). */
  retried = 0;

  constructor(options: JetStreamPipelineOptions) {
    this.bus = options.bus;
    this.timeoutMs = options.timeoutMs;
    this.retries = options.retries;
    this.expectStream = options.expectStream;
  }

  /** Publishes awaiting their ack. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends `data` to `subject` now; resolves with the stream's ack, or rejects with
   * TpError(TP_ERR_BUS_PUBLISH) once the bounded retries are spent or a retry cannot help.
   */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishAck> {
    return new Promise<PublishAck>((resolve, reject) => {
      const headers = natsHeaders();
      headers.set(MSG_ID_HEADER, msgId);
      if (this.expectStream !== undefined) headers.set(EXPECTED_STREAM_HEADER, this.expectStream);
      this.send({ token: '', subject, data, headers, msgId, attempt: 0, deadline: 0, resolve, reject });
    });
  }

  private send(p: Pending): void {
    const nc = this.bus.connection;
    if (nc === undefined || !this.bus.connected || nc.isClosed()) {
      this.fail(p, `the bus is ${this.bus.status}`);
      return;
    }
    if (nc !== this.nc) this.attach(nc);
    if (p.token === '') p.token = (this.nextToken++).toString(36);
    p.deadline = performance.now() + this.timeoutMs;
    this.pending.set(p.token, p);
    try {
      nc.publish(p.subject, p.data, { reply: this.prefix + p.token, headers: p.headers });
    } catch (err) {
      this.pending.delete(p.token);
      this.retryOrFail(p, err instanceof Error ? err.message : String(err));
      return;
    }
    if (this.timer === undefined && !this.sweeping) this.arm(p.deadline);
  }

  /** Subscribes to the reply inbox of `nc` (a new client: acks of the old one never come). */
  private attach(nc: NatsConnection): void {
    this.nc = nc;
    this.prefix = `${createInbox()}.`;
    const sub = nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => this.onAck(err, msg) });
    this.sub = sub;
    void sub.closed.then(() => {
      if (this.sub !== sub) return;
      // Closed or drained with the connection: no ack can come any more.
      this.sub = undefined;
      this.nc = undefined;
      for (const p of [...this.pending.values()]) {
        this.pending.delete(p.token);
        this.fail(p, 'the bus connection closed before the ack came');
      }
    });
  }

  private onAck(err: NatsError | null, msg: Msg): void {
    if (err !== null) return; // the subscription failed (permissions): the deadlines settle it
    const p = this.pending.get(msg.subject.slice(this.prefix.length));
    if (p === undefined) return; // a late ack of a message already settled
    this.pending.delete(p.token);
    if (msg.headers?.code === NO_RESPONDERS) {
      this.fail(p, 'no stream takes the subject (no responders)');
      return;
    }
    let ack: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { description?: unknown; err_code?: unknown; code?: unknown } };
    try {
      ack = JSON.parse(this.decoder.decode(msg.data)) as typeof ack;
    } catch {
      this.retryOrFail(p, 'the ack is not JSON');
      return;
    }
    if (ack.error !== undefined) {
      this.retryOrFail(p, `${String(ack.error.description ?? 'error')} (${String(ack.error.err_code ?? ack.error.code ?? '?')})`);
      return;
    }
    if (typeof ack.stream !== 'string' || ack.stream === '' || typeof ack.seq !== 'number') {
      this.retryOrFail(p, 'the ack names no stream');
      return;
    }
    p.resolve({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true });
  }

  private retryOrFail(p: Pending, reason: string): void {
    if (p.attempt < this.retries && this.bus.connected) {
      p.attempt++;
      this.retried++;
      this.send(p);
    } else {
      this.fail(p, reason);
    }
  }

  private fail(p: Pending, reason: string): void {
    p.reject(
      new TpError(ErrorCode.BusPublish, `bus publish to ${p.subject} failed after ${p.attempt + 1} attempt(s): ${reason}`, {
        context: { subject: p.subject, msgId: p.msgId, attempts: p.attempt + 1 },
      }),
    );
  }

  private arm(deadline: number): void {
    this.timer = setTimeout(this.sweep, Math.max(0, deadline - performance.now()));
    this.timer.unref();
  }

  /** Acks not come by their deadline: retried (moving to the map's end) or failed. */
  private readonly sweep = (): void => {
    this.timer = undefined;
    const now = performance.now();
    this.sweeping = true;
    try {
      // Retries go to the map's end with a later deadline: the loop stops at the first of them.
      for (const p of this.pending.values()) {
        if (p.deadline > now) {
          this.arm(p.deadline);
          return;
        }
        this.pending.delete(p.token);
        this.retryOrFail(p, `no ack within ${this.timeoutMs} ms`);
      }
    } finally {
      this.sweeping = false;
    }
  };
}
