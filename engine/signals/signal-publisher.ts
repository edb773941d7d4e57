/**
 * Publishes TradeSignals on `signals.<source>` (stream SIGNALS), each with its id as the JetStream
 * message id, so a publish retried after a lost acknowledgement is stored once. A failure is
 * TP_ERR_BUS_PUBLISH.
 */
import type { JetStreamClient } from 'nats';

import { ErrorCode, TpError } from '../errors.js';
import { encodeTradeSignal, tradeSignalSubject, type TradeSignal } from '../messages/index.js';

export interface SignalSink {
  publish(signal: TradeSignal): Promise<unknown>;
}

export class SignalPublisher implements SignalSink {
  constructor(
    private readonly js: JetStreamClient,
    /** Subject prefix (tests); default none. */
    private readonly prefix = '',
    private readonly timeoutMs = 2_000,
  ) {}

  async publish(signal: TradeSignal): Promise<{ subject: string; seq: number; duplicate: boolean }> {
    const subject = tradeSignalSubject(signal.source, this.prefix);
    const bytes = encodeTradeSignal(signal);
    try {
      const ack = await this.js.publish(subject, bytes, { msgID: signal.id, timeout: this.timeoutMs });
      return { subject, seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      throw new TpError(ErrorCode.BusPublish, `publishing signal ${signal.id} on ${subject} failed: ${(err as Error).message}`, { cause: err, context: { subject, msgId: signal.id } });
    }
  }
}
