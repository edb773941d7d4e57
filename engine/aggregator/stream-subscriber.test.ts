import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';

import { loadTidepoolProto } from '../proto.js';
import { StreamSubscriber, frameWithSequence } from './stream-subscriber.js';

const method = (loadTidepoolProto().packageDefinition['tidepool.v1.QuoteAggregatorService'] as ServiceDefinition)['StreamAggregatedQuotes']!;
const encode = (pairId: string, outputAmount: string): Buffer => method.responseSerialize({ pairId, outputAmount });
const decode = (b: Buffer) => method.responseDeserialize(b) as { pairId: string; outputAmount: string; sequence: string };

/** A stand-in for a grpc-js server stream whose write() reports a full buffer while `full`. */
class FakeCall extends EventEmitter {
  written: Buffer[] = [];
  full = false;
  ended = false;
  write(b: Buffer): boolean {
    this.written.push(b);
    return !this.full;
  }
  end(): void {
    this.ended = true;
  }
}

describe('frameWithSequence', () => {
  it.each([1, 127, 128, 300, 2 ** 31, 2 ** 53 - 1])('appends sequence %s as field 20 of the encoded body', (seq) => {
    const q = decode(frameWithSequence(encode('abc', '18446744073709551615'), seq));
    expect(q).toMatchObject({ pairId: 'abc', outputAmount: '18446744073709551615', sequence: String(seq) });
  });
});

describe('StreamSubscriber', () => {
  it('numbers each pair from 1 on its own', () => {
    const call = new FakeCall();
    const sub = new StreamSubscriber(call as unknown as grpc.ServerWritableStream<unknown, Buffer>, 0, 1000, ['a', 'b']);
    sub.send('a', encode('a', '1'), 1);
    sub.send('b', encode('b', '1'), 1);
    sub.send('a', encode('a', '2'), 2);
    sub.send('zzz', encode('zzz', '1'), 2); // not a pair of this stream
    expect(call.written.map(decode).map((q) => `${q.pairId}#${q.sequence}`)).toEqual(['a#1', 'b#1', 'a#2']);
  });

  it('keeps only the latest body per pair while the client is slow, and sends them on drain', () => {
    const call = new FakeCall();
    const sub = new StreamSubscriber(call as unknown as grpc.ServerWritableStream<unknown, Buffer>, 0, 1000, ['a', 'b']);
    call.full = true;
    sub.send('a', encode('a', '1'), 1); // written, but the buffer is now full
    sub.send('a', encode('a', '2'), 2);
    sub.send('a', encode('a', '3'), 3);
    sub.send('b', encode('b', '9'), 3);
    expect(call.written).toHaveLength(1);
    expect(sub.superseded).toBe(1);
    call.full = false;
    call.emit('drain');
    expect(call.written.map(decode).map((q) => `${q.pairId}:${q.outputAmount}#${q.sequence}`)).toEqual(['a:1#1', 'a:3#2', 'b:9#1']);
  });

  it('end() ends the call once and stops writing', () => {
    const call = new FakeCall();
    const sub = new StreamSubscriber(call as unknown as grpc.ServerWritableStream<unknown, Buffer>, 0, 1000, ['a']);
    sub.end();
    sub.end();
    sub.send('a', encode('a', '1'), 1);
    expect(call.ended).toBe(true);
    expect(call.written).toHaveLength(0);
  });
});
