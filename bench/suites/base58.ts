import bs58 from 'bs58';
import { Bench } from 'tinybench';
import { encodeBase58Fast, nativeEncodeBase58, tsEncodeBase58 } from '../../engine/chain/native-base58.js';
import type { Figure, Suite } from '../harness.js';

/**
 * `base58`: encoding a 64-byte signature and a 32-byte key taken from a larger buffer, as the
 * scanner does for kept transactions and decoded pools, and from fresh small arrays (which V8 keeps
 * on its heap and Node-API must move off: where the native call costs more, and why the engine's
 * selection in native-base58.ts has a higher threshold for them). Encoders: bs58 (the library
 * baseline), the TypeScript encoder, the native one, and the per-call selection the engine uses.
 * tinybench times each task; p50/p99 are per call.
 */
const SLOTS = 1024;

function sourceBuffer(): Uint8Array {
  const buf = new Uint8Array(SLOTS * 64 + 64);
  let x = 58;
  for (let i = 0; i < buf.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    buf[i] = x >>> 24;
  }
  return buf;
}

export const base58Suite: Suite = {
  name: 'base58',
  description: 'base58 of 64-byte signatures and 32-byte keys: bs58 vs TypeScript vs native vs the engine selection',
  async run(): Promise<Figure[]> {
    const buf = sourceBuffer();
    const figures: Figure[] = [];
    const cases = [
      { label: '64-byte signature in a batch', size: 64, fresh: false },
      { label: '32-byte key in a batch', size: 32, fresh: false },
      { label: 'fresh 32-byte array', size: 32, fresh: true },
      { label: 'fresh 16-byte array', size: 16, fresh: true },
    ];
    for (const { label, size, fresh } of cases) {
      let i = 0;
      // Fresh arrays are copied out of the buffer on every call, for every encoder alike.
      const src = fresh ? (at: number): Uint8Array => buf.slice(at, at + size) : (): Uint8Array => buf;
      const next = (): number => (i = (i + 1) & (SLOTS - 1)) * 64;
      const bench = new Bench({ time: 1500, warmupTime: 300 });
      bench.add('bs58', () => {
        const at = next();
        const b = src(at);
        bs58.encode(fresh ? b : b.subarray(at, at + size));
      });
      bench.add('TypeScript', () => {
        const at = next();
        const b = src(at);
        if (fresh) tsEncodeBase58(b);
        else tsEncodeBase58(b, at, at + size);
      });
      if (nativeEncodeBase58 !== null) {
        const native = nativeEncodeBase58;
        bench.add('native', () => {
          const at = next();
          const b = src(at);
          if (fresh) native(b, 0, size);
          else native(b, at, at + size);
        });
      }
      bench.add('engine selection', () => {
        const at = next();
        const b = src(at);
        if (fresh) encodeBase58Fast(b);
        else encodeBase58Fast(b, at, at + size);
      });
      await bench.run();
      const result = (name: string): { hz: number; p50Us: number; p99Us: number } => {
        const r = bench.getTask(name)?.result;
        if (!r || r.state !== 'completed') throw new Error(`base58 bench task ${name} did not complete`);
        return { hz: r.throughput.mean, p50Us: r.latency.p50 * 1000, p99Us: r.latency.p99 * 1000 };
      };
      const baseline = result('bs58');
      for (const name of ['TypeScript', ...(nativeEncodeBase58 === null ? [] : ['native']), 'engine selection']) {
        const r = result(name);
        figures.push({
          name: `${label}, ${name}`,
          unit: 'ops/s',
          value: r.hz,
          higherIsBetter: true,
          baseline: { name: 'bs58', value: baseline.hz },
          p50Us: r.p50Us,
          p99Us: r.p99Us,
        });
      }
    }
    return figures;
  },
};
