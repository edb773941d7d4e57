import { parentPort, workerData } from 'node:worker_threads';
import { getBase58Decoder, getCompiledTransactionMessageDecoder, getShortU16Decoder } from '@solana/kit';
import { EntryBatchIndex } from '../../engine/chain/entry-batch-index.js';
import { KeySet } from '../../engine/chain/key-set.js';
import { encodeBase58Fast } from '../../engine/chain/native-base58.js';
import { nativeParseEntries } from '../../engine/chain/native-parser.js';
import { parseEntriesInto } from '../../engine/chain/entry-parser.js';
import { ParseStatus, type ParseEntriesFn } from '../../engine/chain/parse-layout.js';
import { LatencyRecorder } from '../latency.js';

/**
 * One worker thread measuring one parser: for every batch, parse it, keep the transactions that
 * touch a monitored pool (static keys), and make the base58 signature of each kept transaction,
 * which is what the scanner does before fetching accounts. The signatures go through
 * encodeBase58Fast (the C++ encoder when the add-on loaded) for both parsers alike. Reports
 * transactions per second and the per-batch latency distribution.
 */

export interface ParseWorkerInput {
  parser: 'typescript' | 'native' | 'kit';
  batches: Uint8Array[];
  txCounts: number[];
  poolKeys: string[];
  durationMs: number;
}

export interface ParseWorkerOutput {
  parser: string;
  txPerSecond: number;
  batches: number;
  kept: number;
  p50Us: number;
  p99Us: number;
}

function runIndexParser(input: ParseWorkerInput, parse: ParseEntriesFn): ParseWorkerOutput {
  const keys = new KeySet();
  for (const k of input.poolKeys) keys.add(k);
  const index = new EntryBatchIndex();
  const latency = new LatencyRecorder();
  const signatures: string[] = [];
  const pass = (record: boolean): { txs: number; kept: number; batches: number; ns: bigint } => {
    let txs = 0;
    let kept = 0;
    let batches = 0;
    const deadline = performance.now() + (record ? input.durationMs : input.durationMs / 4);
    const started = process.hrtime.bigint();
    while (performance.now() < deadline) {
      for (let b = 0; b < input.batches.length; b++) {
        const bytes = input.batches[b]!;
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
        if (record) latency.recordNs(process.hrtime.bigint() - t0);
        txs += n;
        batches++;
        signatures.length = 0;
      }
    }
    return { txs, kept, batches, ns: process.hrtime.bigint() - started };
  };
  pass(false); // warm-up: JIT, arrays grown to size
  const r = pass(true);
  return result(input.parser, r, latency);
}

/**
 * The official SDK's decoders doing the same job: the baseline. A transaction has no length
 * prefix and kit's transaction decoder takes the rest of its input as the message, so the
 * signatures are read with kit's short-u16 decoder and the message with its compiled-message
 * decoder, which reports where the message ends.
 */
function runKit(input: ParseWorkerInput): ParseWorkerOutput {
  const shortU16 = getShortU16Decoder();
  const base58 = getBase58Decoder();
  const messageDecoder = getCompiledTransactionMessageDecoder();
  const monitored = new Set(input.poolKeys);
  const latency = new LatencyRecorder();
  const pass = (record: boolean): { txs: number; kept: number; batches: number; ns: bigint } => {
    let txs = 0;
    let kept = 0;
    let batches = 0;
    const deadline = performance.now() + (record ? input.durationMs : input.durationMs / 4);
    const started = process.hrtime.bigint();
    while (performance.now() < deadline) {
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
        if (record) latency.recordNs(process.hrtime.bigint() - t0);
        batches++;
      }
    }
    return { txs, kept, batches, ns: process.hrtime.bigint() - started };
  };
  pass(false);
  return result('kit', pass(true), latency);
}

function result(parser: string, r: { txs: number; kept: number; batches: number; ns: bigint }, latency: LatencyRecorder): ParseWorkerOutput {
  const s = latency.summary();
  return { parser, txPerSecond: (r.txs * 1e9) / Number(r.ns), batches: r.batches, kept: r.kept, p50Us: s.p50Us, p99Us: s.p99Us };
}

const input = workerData as ParseWorkerInput;
let output: ParseWorkerOutput;
if (input.parser === 'kit') output = runKit(input);
else if (input.parser === 'native') {
  if (nativeParseEntries === null) throw new Error('native parser not loaded');
  output = runIndexParser(input, nativeParseEntries);
} else output = runIndexParser(input, parseEntriesInto);
parentPort!.postMessage(output);
