import { EventEmitter } from 'node:events';

import { describe, expect, it } from 'vitest';

import type { Logger } from '../obs/logger.js';
import { LatestPerPairWriter } from './latest-per-pair-writer.js';

interface Msg {
  pairId: string;
  n: number;
}

/** A sink that accepts while `accepting` and records what it was given. */
class FakeSink extends EventEmitter {
  readonly written: Msg[] = [];
  accepting = true;
  throwOn: number | undefined;

  write(m: Msg): boolean {
    if (m.n === this.throwOn) throw new Error('refused');
    this.written.push(m);
    return this.accepting;
  }

  drain(): void {
    this.accepting = true;
    this.emit('drain');
  }
}

function counter(): { inc(): void; value: number } {
  return {
    value: 0,
    inc() {
      this.value++;
    },
  };
}

function setup(logger?: Logger) {
  const sink = new FakeSink();
  const sent = counter();
  const superseded = counter();
  const writer = new LatestPerPairWriter<Msg>({ sink, sentCounter: sent, supersededCounter: superseded, logger, writeFailedMessage: 'write failed' });
  return { sink, sent, superseded, writer };
}

const m = (pair: number, n: number): Msg => ({ pairId: `p${pair}`, n });

describe('LatestPerPairWriter', () => {
  it('writes straight through while the sink accepts', () => {
    const { sink, sent, writer } = setup();
    writer.send(0, m(0, 1));
    writer.send(1, m(1, 2));
    writer.send(0, m(0, 3));
    expect(sink.written.map((x) => x.n)).toEqual([1, 2, 3]);
    expect(writer.sent).toBe(3);
    expect(sent.value).toBe(3);
    expect(writer.isBlocked).toBe(false);
  });

  it('holds only the latest message per pair while backpressured and counts the replaced ones', () => {
    const { sink, superseded, writer } = setup();
    sink.accepting = false;
    writer.send(0, m(0, 1)); // written, the sink asks to wait
    expect(writer.isBlocked).toBe(true);
    writer.send(0, m(0, 2));
    writer.send(1, m(1, 3));
    writer.send(0, m(0, 4));
    expect(sink.written.map((x) => x.n)).toEqual([1]);
    expect(superseded.value).toBe(1);
    sink.drain();
    // In the order they were last replaced: pair 1, then pair 0.
    expect(sink.written.map((x) => x.n)).toEqual([1, 3, 4]);
    expect(writer.sent).toBe(3);
    expect(writer.isBlocked).toBe(false);
  });

  it('stops flushing when the sink asks to wait again, and goes on at the next drain', () => {
    const { sink, writer } = setup();
    sink.accepting = false;
    writer.send(0, m(0, 1));
    writer.send(1, m(1, 2));
    writer.send(2, m(2, 3));
    sink.emit('drain'); // still not accepting: the first held one is written, then it waits again
    expect(sink.written.map((x) => x.n)).toEqual([1, 2]);
    expect(writer.isBlocked).toBe(true);
    sink.drain();
    expect(sink.written.map((x) => x.n)).toEqual([1, 2, 3]);
  });

  it('logs a write the sink throws on, does not count it, and goes on', () => {
    const errors: unknown[] = [];
    const logger = { error: (obj: unknown, msg: string) => errors.push([obj, msg]) } as unknown as Logger;
    const { sink, sent, writer } = setup(logger);
    sink.throwOn = 1;
    writer.send(0, m(0, 1));
    writer.send(1, m(1, 2));
    expect(sink.written.map((x) => x.n)).toEqual([2]);
    expect(sent.value).toBe(1);
    expect(errors).toHaveLength(1);
    expect((errors[0] as [{ pairId: string }, string])[0].pairId).toBe('p0');
    expect((errors[0] as [unknown, string])[1]).toBe('write failed');
  });

  it('writes nothing held once closed', () => {
    const { sink, writer } = setup();
    sink.accepting = false;
    writer.send(0, m(0, 1));
    writer.send(1, m(1, 2));
    writer.close();
    sink.drain();
    expect(sink.written.map((x) => x.n)).toEqual([1]);
  });
});
