/**
 * Trade opportunities as the planners publish them: an ordered (ephemeral, unacknowledged)
 * JetStream consumer on the `TRADE_OPPORTUNITIES` stream (`trade.opportunities.>`), starting with
 * the newest `OPPORTUNITY_BACKLOG` messages the stream holds. The console never creates the stream
 * (that is the planners' job, engine/bus/platform-streams.ts): while it does not exist, the feed
 * looks again every `retryMs`. The message schema is the planners' (issue 16): each message is
 * shown as its subject, time and JSON body, with the fields a table wants picked out when present.
 */
import { DeliverPolicy, type ConsumerMessages } from 'nats';
import { BusConnection, PlatformStream } from '../bus/index.js';
import type { Logger } from '../obs/index.js';

export const OPPORTUNITY_BACKLOG = 50;

export interface OpportunityRow {
  seq: number;
  subject: string;
  /** Unix ms the stream stored it. */
  receivedAt: number;
  /** Picked from the body when present (names of the camelCase and snake_case spellings). */
  strategy: string | null;
  expectedProfit: string | null;
  /** The body: parsed JSON, or its text when not JSON. */
  body: unknown;
}

function pick(body: unknown, ...names: string[]): string | null {
  if (body === null || typeof body !== 'object') return null;
  for (const n of names) {
    const v = (body as Record<string, unknown>)[n];
    if (v !== undefined && v !== null && typeof v !== 'object') return String(v);
  }
  return null;
}

/** One stream message as a row. */
export function opportunityRow(seq: number, subject: string, receivedAt: number, data: Uint8Array): OpportunityRow {
  const text = new TextDecoder().decode(data);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: shown as text
  }
  return {
    seq,
    subject,
    receivedAt,
    strategy: pick(body, 'strategy', 'type', 'kind') ?? subject.split('.')[2] ?? null,
    expectedProfit: pick(body, 'expectedProfit', 'expected_profit', 'profit'),
    body,
  };
}

export interface OpportunityFeedOptions {
  servers: readonly string[];
  logger: Logger;
  onOpportunity: (row: OpportunityRow) => void;
  stream?: string;
  retryMs?: number;
}

export class OpportunityFeed {
  private readonly bus: BusConnection;
  private messages: ConsumerMessages | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** 'waiting' until the stream exists and is consumed. */
  status: 'connecting' | 'waiting_for_stream' | 'consuming' | 'closed' = 'connecting';

  constructor(private readonly options: OpportunityFeedOptions) {
    this.bus = BusConnection.open({ servers: options.servers, name: 'tidepool-console', logger: options.logger });
    this.bus.onConnect(() => this.attach());
  }

  private async attach(): Promise<void> {
    if (this.closed || this.messages !== undefined) return;
    const stream = this.options.stream ?? PlatformStream.TradeOpportunities;
    const jsm = await this.bus.jetstreamManager();
    const js = this.bus.jetstream();
    if (jsm === undefined || js === undefined) return;
    let last: number;
    try {
      last = (await jsm.streams.info(stream)).state.last_seq;
    } catch {
      this.status = 'waiting_for_stream';
      this.timer = setTimeout(() => void this.attach().catch(() => undefined), this.options.retryMs ?? 5_000);
      this.timer.unref();
      return;
    }
    const start = Math.max(1, last - OPPORTUNITY_BACKLOG + 1);
    const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start });
    const messages = await consumer.consume();
    this.messages = messages;
    this.status = 'consuming';
    void (async () => {
      for await (const m of messages) {
        this.options.onOpportunity(opportunityRow(m.seq, m.subject, Math.floor(m.info.timestampNanos / 1e6), m.data));
      }
    })().catch((err: unknown) => this.options.logger.warn({ err }, 'opportunity feed stopped'));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.status = 'closed';
    clearTimeout(this.timer);
    await this.messages?.close().catch(() => undefined);
    await this.bus.close();
  }
}
