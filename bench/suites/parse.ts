import { Worker } from 'node:worker_threads';
import * as base58 from '../../engine/chain/base58.js';
import { nativeParseEntries, nativeStatus } from '../../engine/chain/native-parser.js';
import { generateMainnetMix } from '../../engine/chain/testing/mainnet-mix.js';
import { Prng } from '../../engine/prng.js';
import type { Figure, Suite } from '../harness.js';
import type { ParserName, ParseWorkerInput, ParseWorkerOutput } from './parse-worker.js';

/**
 * `parse`: entry parsing throughput on one worker thread, TypeScript and native side by side,
 * with @solana/kit's decoders doing the same job as the baseline. The mix: mainnet-sized
 * transactions (votes, v0 swaps with lookups, up to 1232 bytes), 20% touching one of 30
 * monitored pools, in batches of about 64 transactions (one ShredStream message). All three run
 * in the same worker in alternating rounds, so load from elsewhere falls on them alike.
 */
const GOAL_TX_PER_SECOND = 200_000;
const BATCHES = 200;
const TXS_PER_BATCH = 64;
const ROUNDS = 8;
const ROUND_MS = 400;

function runWorker(input: ParseWorkerInput): Promise<ParseWorkerOutput[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./parse-worker.js', import.meta.url), { workerData: input });
    worker.once('message', (m: ParseWorkerOutput[]) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`parse worker exited with ${code}`));
    });
  });
}

export const parseSuite: Suite = {
  name: 'parse',
  description: 'entry + transaction parsing, tx/s on one worker thread: TypeScript vs native vs @solana/kit',
  async run(): Promise<Figure[]> {
    const prng = new Prng(7);
    const poolKeys = Array.from({ length: 30 }, () => base58.encode(prng.bytes(32)));
    const batches: Uint8Array[] = [];
    for (let i = 0; i < BATCHES; i++) {
      batches.push(generateMainnetMix({ seed: 1000 + i, transactions: TXS_PER_BATCH, poolKeys, poolFraction: 0.2 }).bytes);
    }
    const parsers: ParserName[] = nativeParseEntries === null ? ['kit', 'typescript'] : ['kit', 'typescript', 'native'];
    const results = await runWorker({ parsers, batches, poolKeys, rounds: ROUNDS, roundMs: ROUND_MS });
    const byName = (name: ParserName): ParseWorkerOutput | undefined => results.find((r) => r.parser === name);
    const kit = byName('kit')!;
    const ts = byName('typescript')!;
    const native = byName('native');
    const goal = `≥ ${GOAL_TX_PER_SECOND.toLocaleString('en-US')} tx/s`;
    const figures: Figure[] = [
      {
        name: 'TypeScript parser',
        unit: 'tx/s',
        value: ts.txPerSecond,
        higherIsBetter: true,
        baseline: { name: '@solana/kit decoders', value: kit.txPerSecond },
        p50Us: ts.p50Us,
        p99Us: ts.p99Us,
        goal,
        goalMet: ts.txPerSecond >= GOAL_TX_PER_SECOND,
        note: `per-batch latency of ~${TXS_PER_BATCH} tx; kit p50/p99 ${kit.p50Us.toFixed(1)}/${kit.p99Us.toFixed(1)} µs`,
      },
    ];
    if (native) {
      figures.push({
        name: 'native parser (C++)',
        unit: 'tx/s',
        value: native.txPerSecond,
        higherIsBetter: true,
        baseline: { name: 'TypeScript parser', value: ts.txPerSecond },
        p50Us: native.p50Us,
        p99Us: native.p99Us,
        goal,
        goalMet: native.txPerSecond >= GOAL_TX_PER_SECOND,
      });
    } else {
      figures.push({
        name: 'native parser (C++): not loaded',
        unit: 'tx/s',
        value: Number.NaN,
        higherIsBetter: true,
        baseline: { name: 'TypeScript parser', value: ts.txPerSecond },
        note: nativeStatus.reason ?? 'add-on absent',
      });
    }
    return figures;
  },
};
