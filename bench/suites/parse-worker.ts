import { parentPort, workerData } from 'node:worker_threads';
import { getBase58Decoder, getCompiledTransactionMessageDecoder, getShortU16Decoder } from '@solana/kit';
import { encodeBase58Fast } from '../../engine/chain/native-base58.js';
import { EntryBatchIndex } from '../../engine/chain/entry-batch-index.js';
import { KeySet } from '../../engine/chain/key-set.js';
import { nativeParseEntries } from '../../engine/chain/native-parser.js';
import { parseEntriesInto } from '../../engine/chain/entry-parser.js';
import { ParseStatus, type ParseEntriesFn } from '../../engine/chain/parse-layout.js';
import { LatencyRecorder } from '../latency.js';

/**
 * One worker thread measuring the parsers side by side: for every batch, parse it, keep the
 * transactions that touch a monitored pool (static keys), and make the base58 signature of each
 * kept transaction, which is what the scanner does before fetching accounts. The parsers run in
 * alternating rounds, so that load from elsewhere on the machine falls on all of them alike.
 * Reports transactions per second and the per-batch latency distribution of each.
 */

export type ParserName = 'typescript' | 'native' | 'kit';

export interface ParseWorkerInput {
  parsers: ParserName[];
  batches: Uint8Array[];
  poolKeys: string[];
  rounds: number;
  roundMs: number;
}

export interface ParseWorkerOutput {
  parser: ParserName;
  txPerSecond: number;
  batches: number;
  kept: number;
  p50Us: number;
  p99Us: number;
}

/** Runs one parser over every batch once; returns transactions seen and kept. */
type BatchPass = (record: LatencyRecorder | undefined) => { txs: number; kept: number; batches: number };

function indexPass(input: ParseWorkerInput, parse: ParseEntriesFn): BatchPass {
  const keys = new KeySet();
  for (const k of input.poolKeys) keys.add(k);
  const index = new EntryBatchIndex();
  const signatures: string[] = [];
  return (latency) => {
    let txs = 0;
    let kept = 0;
    for (const bytes of input.batches) {
      const t0 = process.hrtime.bigint();
      if (index.parse(bytes, parse) !== ParseStatus.Ok) throw new Error('benchmark batch failed to parse');
      const n = index.txCount;
      for (let tx = 0; tx < n; tx++) {
        if (index.firstStaticKeyIn(tx, keys) >= 0) {
          const at = index.signatureOffset(tx);
          signatures.push(encodeBase58Fast(bytes, at, at + 64));
          kept++;
        }
      }
      latency?.recordNs(process.hrtime.bigint() - t0);
      txs += n;
      signatures.length = 0;
    }
    return { txs, kept, batches: input.batches.length };
  };
}

/**
 * The official SDK's decoders doing the same job: the baseline. A transaction has no length
 * prefix and kit's transaction decoder takes the rest of its input as the message, so the
 * signatures are read with kit's short-u16 decoder and the message with its compiled-message
 * decoder, which reports where the message ends.
 */
function kitPass(input: ParseWorkerInput): BatchPass {
  const shortU16 = getShortU16Decoder();
  const base58 = getBase58Decoder();
  const messageDecoder = getCompiledTransactionMessageDecoder();
  const monitored = new Set(input.poolKeys);
  return (latency) => {
    let txs = 0;
    let kept = 0;
    for (const bytes of input.batches) {
      const t0 = process.hrtime.bigint();
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let at = 0;
      const entries = Number(view.getBigUint64(at, true));
      at += 8;
      for (let e = 0; e < entries; e++) {
        at += 8 + 32;
        const n = Number(view.getBigUint64(at, true));
        at += 8;
        for (let i = 0; i < n; i++) {
          const [sigCount, afterCount] = shortU16.read(bytes, at);
          const firstSignature = bytes.slice(afterCount, afterCount + 64);
          const [message, next] = messageDecoder.read(bytes, afterCount + 64 * sigCount);
          at = next;
          if (message.staticAccounts.some((a) => monitored.has(a))) {
            base58.decode(firstSignature);
            kept++;
          }
          txs++;
        }
      }
      latency?.recordNs(process.hrtime.bigint() - t0);
    }
    return { txs, kept, batches: input.batches.length };
  };
}

function passFor(input: ParseWorkerInput, name: ParserName): BatchPass {
  if (name === 'kit') return kitPass(input);
  if (name === 'native') {
    if (nativeParseEntries === null) throw new Error('native parser not loaded');
    return indexPass(input, nativeParseEntries);
  }
  return indexPass(input, parseEntriesInto);
}

function measure(input: ParseWorkerInput): ParseWorkerOutput[] {
  const runners = input.parsers.map((name) => ({
    name,
    pass: passFor(input, name),
    latency: new LatencyRecorder(),
    txs: 0,
    kept: 0,
    batches: 0,
    ns: 0n,
  }));
  for (const r of runners) r.pass(undefined); // warm-up: JIT, arrays grown to size
  for (let round = 0; round < input.rounds; round++) {
    for (const r of runners) {
      const deadline = performance.now() + input.roundMs;
      const started = process.hrtime.bigint();
      do {
        const done = r.pass(r.latency);
        r.txs += done.txs;
        r.kept += done.kept;
        r.batches += done.batches;
      } while (performance.now() < deadline);
      r.ns += process.hrtime.bigint() - started;
    }
  }
  return runners.map((r) => {
    const s = r.latency.summary();
    return { parser: r.name, txPerSecond: (r.txs * 1e9) / Number(r.ns), batches: r.batches, kept: r.kept, p50Us: s.p50Us, p99Us: s.p99Us };
  });
}

parentPort!.postMessage(measure(workerData as ParseWorkerInput));
