/**
 * Publishes TradeOpportunities on `trade.opportunities.<strategy>` (stream TRADE_OPPORTUNITIES),
 * each with its id as the JetStream message id (`Nats-Msg-Id`), so a publish retried after a lost
 * acknowledgement is stored once. The publish waits for the stream's acknowledgement; a failure is
 * TP_ERR_BUS_PUBLISH (the caller counts it; the opportunity is not retried: it expires in seconds).
 */
import type { JetStreamClient } from 'nats';

import { ErrorCode, TpError } from '../errors.js';
import { encodeTradeOpportunity, tradeOpportunitySubject, type TradeOpportunity } from '../messages/index.js';

export interface PublishedOpportunity {
  subject: string;
  seq: number;
  duplicate: boolean;
}

export class OpportunityPublisher {
  constructor(
    private readonly js: JetStreamClient,
    /** Subject prefix (tests); default none. */
    private readonly prefix = '',
    private readonly timeoutMs = 2_000,
  ) {}

  async publish(op: TradeOpportunity): Promise<PublishedOpportunity> {
    const subject = tradeOpportunitySubject(op.strategy, this.prefix);
    const bytes = encodeTradeOpportunity(op);
    try {
      const ack = await this.js.publish(subject, bytes, { msgID: op.id, timeout: this.timeoutMs });
      return { subject, seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      throw new TpError(ErrorCode.BusPublish, `publishing opportunity ${op.id} on ${subject} failed: ${(err as Error).message}`, { cause: err, context: { subject, msgId: op.id } });
    }
  }
}
