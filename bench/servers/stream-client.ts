/**
 * The heavy stream client of the `quote-streams` bench suite, alone in its process: opens
 * `--streams` StreamBatchQuotes calls on `--grpc-port`, each with `--pairs` distinct pairs built
 * from the request targets in `--paths` (target k's mints, its amount plus the stream's index, so
 * every pair of every stream is distinct), at `--interval` ms. Prints one JSON line
 * `{"ready":true,...}` once every stream has delivered, then, when stdin closes, one more line with what
 * it received (`{"quotes":..,"errors":..,"refused":[...]}`) and exits.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';

import { loadTidepoolProto } from '../../engine/proto.js';

const { values } = parseArgs({
  options: {
    'grpc-port': { type: 'string' },
    paths: { type: 'string' },
    streams: { type: 'string', default: '16' },
    pairs: { type: 'string', default: '1000' },
    interval: { type: 'string', default: '100' },
  },
});

type Client = grpc.Client & { StreamBatchQuotes(request: unknown): grpc.ClientReadableStream<{ error?: unknown }> };

const targets = readFileSync(values.paths!, 'utf8').trim().split('\n').map((line) => new URLSearchParams(line.slice(line.indexOf('?') + 1)));
const { QuoteService } = loadTidepoolProto();
const client = new QuoteService(`127.0.0.1:${values['grpc-port']!}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 }) as unknown as Client;
const streams = Number(values.streams);
const pairsPerStream = Number(values.pairs);
let quotes = 0;
let errors = 0;
let delivered = 0;
const refused: string[] = [];
const started = Date.now();
const calls: grpc.ClientReadableStream<unknown>[] = [];

for (let s = 0; s < streams; s++) {
  const pairs = Array.from({ length: pairsPerStream }, (_, i) => {
    const t = targets[(s * pairsPerStream + i) % targets.length]!;
    return { inputMint: t.get('input'), outputMint: t.get('output'), amount: String(BigInt(t.get('amount')!) + BigInt(s)) };
  });
  const call = client.StreamBatchQuotes({ pairs, updateIntervalMs: Number(values.interval) });
  calls.push(call);
  let first = true;
  call.on('data', (q: { error?: unknown }) => {
    quotes++;
    if (q.error !== undefined && q.error !== null) errors++;
    if (first) {
      first = false;
      if (++delivered + refused.length === streams) ready();
    }
  });
  call.on('error', (e: grpc.ServiceError) => {
    if (e.code === grpc.status.CANCELLED) return;
    refused.push(`${e.code} ${e.details}`);
    if (first && delivered + refused.length === streams) ready();
  });
}

function ready(): void {
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port: 0, streams: delivered, refused, readyMs: Date.now() - started })}\n`);
}

const since = { at: Date.now(), quotes: 0 };
process.stdin.on('data', () => {
  // Any byte: restart the count (the suite marks the start of its measured window).
  since.at = Date.now();
  since.quotes = quotes;
});
process.stdin.on('end', () => {
  const seconds = (Date.now() - since.at) / 1000;
  process.stdout.write(`${JSON.stringify({ quotes, errors, refused, quotesPerSecond: Math.round((quotes - since.quotes) / seconds) })}\n`);
  for (const c of calls) c.cancel();
  client.close();
  process.exit(0);
});
process.stdin.resume();
