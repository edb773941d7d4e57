/**
 * The pool_update MarketEvents a stream stored between two times, in stream order: a JetStream
 * ordered consumer on `<prefix>market.events.*.pool_update` with DeliverPolicy.StartTime at `from`
 * (an ephemeral consumer the server drops after the read), stopping at the first message stored
 * after `to`, or at the stream's end as it was when the read began (its last sequence then), so a
 * range that is over reads the same messages every time.
 *
 * Times are the stream's storage times (what StartTime selects on), Unix ms; each message comes
 * with its own. A message that does not decode as a MarketEvent is handed on as its error, not
 * dropped silently.
 */
import { DeliverPolicy, type NatsConnection } from 'nats';

import { PlatformStream } from '../bus/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { decodeMarketEvent, type MarketEvent } from '../messages/index.js';

export interface MarketEventRangeOptions {
  nc: NatsConnection;
  /** Unix ms, inclusive. */
  from: number;
  /** Unix ms, inclusive. */
  to: number;
  /** Stream and subject prefix (tests). */
  prefix?: string;
  /** Stream name; default `<prefix>MARKET_EVENTS`. */
  stream?: string;
  /** Gives up when no message arrives for this long while some are still pending. Default 10 s. */
  idleTimeoutMs?: number;
}

export interface RangeMessage {
  seq: number;
  /** Stream storage time, Unix ms. */
  storedAt: number;
  event: MarketEvent | TpError;
}

const NS_PER_MS = 1_000_000;

export async function* readMarketEventRange(options: MarketEventRangeOptions): AsyncGenerator<RangeMessage> {
  const prefix = options.prefix ?? '';
  const stream = options.stream ?? `${prefix}${PlatformStream.MarketEvents}`;
  const jsm = await options.nc.jetstreamManager();
  let lastSeq: number;
  try {
    lastSeq = (await jsm.streams.info(stream)).state.last_seq;
  } catch (err) {
    throw new TpError(ErrorCode.Unavailable, `stream ${stream} could not be read: ${(err as Error).message}`, { cause: err, context: { stream } });
  }
  const consumer = await options.nc.jetstream().consumers.get(stream, {
    filterSubjects: `${prefix}market.events.*.pool_update`,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(options.from).toISOString(),
  });
  if ((await consumer.info()).num_pending === 0) return;
  const messages = await consumer.consume({ max_messages: 256 });
  const idleMs = options.idleTimeoutMs ?? 10_000;
  let timedOut = false;
  let idle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    idle = setTimeout(() => {
      timedOut = true;
      messages.stop();
    }, idleMs);
  };
  arm();
  try {
    for await (const msg of messages) {
      if (msg.seq > lastSeq) break;
      const storedAt = Math.floor(msg.info.timestampNanos / NS_PER_MS);
      if (storedAt > options.to) break;
      let event: MarketEvent | TpError;
      try {
        event = decodeMarketEvent(msg.data);
      } catch (err) {
        event = err instanceof TpError ? err : new TpError(ErrorCode.MessageInvalid, String(err));
      }
      yield { seq: msg.seq, storedAt, event };
      if (msg.info.pending === 0 || msg.seq === lastSeq) break;
      arm();
    }
  } finally {
    if (idle !== undefined) clearTimeout(idle);
    messages.stop();
  }
  if (timedOut) throw new TpError(ErrorCode.Unavailable, `no message from ${stream} for ${idleMs} ms while some were pending`, { context: { stream } });
}
