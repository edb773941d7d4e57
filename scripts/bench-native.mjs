// Races the native entry parser against the TypeScript one on mainnet-like batches, one thread.
// Run by hand, after a build of both:
//   node scripts/build-native.mjs && npx tsc -p tsconfig.build.json && node scripts/bench-native.mjs
// Options: --seconds=N per round (default 1), --rounds=N (default 5). Prints the median tx per CPU
// second of each parser per batch size; rounds alternate between parsers so drift hits both alike.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist', 'engine', 'chain');
if (!existsSync(join(dist, 'native-parser.js')) || !existsSync(join(dist, 'testing', 'mainnet-mix.js'))) {
  console.error('bench-native: build first: npx tsc -p tsconfig.build.json');
  process.exit(2);
}
const load = (file) => import(pathToFileURL(join(dist, file)).href);
const { nativeParseEntries, nativeStatus, tsParseEntries } = await load('native-parser.js');
const { generateMainnetMix } = await load('testing/mainnet-mix.js');
const { COUNTS_LENGTH, COUNT_TXS, ENTRY_STRIDE, ParseStatus, TX_STRIDE } = await load('parse-layout.js');

const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit === undefined ? fallback : Number(hit.slice(name.length + 3));
};
const seconds = arg('seconds', 1);
const rounds = arg('rounds', 5);

if (nativeParseEntries === null) {
  console.error(`bench-native: native parser unavailable: ${nativeStatus.reason}`);
  process.exit(2);
}

// Output arrays sized once for the largest batch, reused by every call (as EntryBatchIndex does).
const entries = new Uint32Array(8192 * ENTRY_STRIDE);
const txs = new Uint32Array(8192 * TX_STRIDE);
const programs = new Uint8Array(65536);
const counts = new Uint32Array(COUNTS_LENGTH);

// Many distinct batches per size, so neither parser runs on one hot buffer.
function corpus(txPerBatch) {
  const batches = [];
  let bytes = 0;
  const n = Math.max(8, Math.min(256, Math.ceil(20_000 / txPerBatch)));
  for (let i = 0; i < n; i++) {
    const mix = generateMainnetMix({ seed: 1000 + i, transactions: txPerBatch });
    batches.push(mix.bytes);
    bytes += mix.bytes.length;
  }
  return { batches, avgBytes: bytes / n };
}

function check(parse, batches) {
  for (const b of batches) {
    const s = parse(b, entries, txs, programs, counts);
    if (s !== ParseStatus.Ok) throw new Error(`parse status ${s}`);
  }
}

/**
 * One timed round: parses the corpus over and over for `seconds`; returns tx per CPU second. CPU
 * time (process.cpuUsage) rather than wall time, so a busy machine that deschedules us skews
 * neither parser; the loop allocates nothing, so GC threads add next to nothing to it.
 */
function round(parse, batches) {
  const deadline = performance.now() + seconds * 1000;
  let parsed = 0;
  const start = process.cpuUsage();
  do {
    for (let i = 0; i < batches.length; i++) {
      parse(batches[i], entries, txs, programs, counts);
      parsed += counts[COUNT_TXS];
    }
  } while (performance.now() < deadline);
  const used = process.cpuUsage(start);
  return (parsed / (used.user + used.system)) * 1e6;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n) => Math.round(n).toLocaleString('en-US');

const parsers = [
  ['typescript', tsParseEntries],
  ['native', nativeParseEntries],
];
console.log(`node ${process.version}, ${seconds}s x ${rounds} rounds per parser, median shown, per CPU second`);
console.log('| txs/batch | bytes/batch | TypeScript tx/s | native tx/s | native/TS | TS ns/batch | native ns/batch |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const size of [1, 8, 64, 512]) {
  const { batches, avgBytes } = corpus(size);
  for (const [, parse] of parsers) {
    check(parse, batches);
    round(parse, batches); // warm-up (JIT tiers, caches)
  }
  const results = { typescript: [], native: [] };
  for (let r = 0; r < rounds; r++) {
    for (const [name, parse] of r % 2 === 0 ? parsers : [...parsers].reverse()) results[name].push(round(parse, batches));
  }
  const ts = median(results.typescript);
  const nat = median(results.native);
  console.log(
    `| ${size} | ${fmt(avgBytes)} | ${fmt(ts)} | ${fmt(nat)} | ${(nat / ts).toFixed(2)}x | ${fmt((size / ts) * 1e9)} | ${fmt((size / nat) * 1e9)} |`,
  );
}

// Per-call floor: an empty entry vector (8 bytes).
{
  const empty = new Uint8Array(8);
  for (const [name, parse] of parsers) {
    for (let i = 0; i < 200_000; i++) parse(empty, entries, txs, programs, counts);
    const n = 2_000_000;
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) parse(empty, entries, txs, programs, counts);
    const used = process.cpuUsage(start);
    console.log(`call overhead, empty batch, ${name}: ${(((used.user + used.system) / n) * 1e3).toFixed(0)} ns/call (CPU time)`);
  }
}
