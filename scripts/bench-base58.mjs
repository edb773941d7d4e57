// Races the base58 encoders in one process: bs58, the TypeScript encoder (base58-encode.ts), the
// C++ one (native/base58.cc) and encodeBase58Fast (native-base58.ts), which picks one of the two
// per call. Run by hand, after a build of both:
//   node scripts/build-native.mjs && npx tsc -p tsconfig.build.json && node scripts/bench-base58.mjs
// Options: --rounds=N (default 7), --iterations=N per round and case (default 100000).
// Prints the median and the best µs of CPU time (process.cpuUsage) per encode over the rounds;
// rounds alternate between encoders so drift on a loaded machine hits all alike.
//
// Two kinds of input:
// - view: a range of a 128 KiB buffer (start, end), as the scanner encodes signatures and keys
//   inside an entry batch;
// - fresh: a new `Uint8Array(n)` per call, copied from that buffer (V8 keeps those of at most 64
//   bytes on its heap, and Node-API moves them off on first sight). Every encoder pays the copy.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import bs58 from 'bs58';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist', 'engine', 'chain');
if (!existsSync(join(dist, 'native-base58.js'))) {
  console.error('bench-base58: build first: npx tsc -p tsconfig.build.json');
  process.exit(2);
}
const { encodeBase58Fast, nativeEncodeBase58, tsEncodeBase58, NATIVE_BASE58_MIN_BYTES, NATIVE_BASE58_MIN_BYTES_ON_HEAP } = await import(
  pathToFileURL(join(dist, 'native-base58.js')).href
);
const { nativeStatus } = await import(pathToFileURL(join(dist, 'native-addon.js')).href);

const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit === undefined ? fallback : Number(hit.slice(name.length + 3));
};
const rounds = arg('rounds', 7);
const iterations = arg('iterations', 100_000);

const SLOTS = 1024;
const source = new Uint8Array(1 << 17);
let seed = 58;
for (let i = 0; i < source.length; i++) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  source[i] = seed >>> 24;
}

const encoders = { bs58: null, typescript: tsEncodeBase58, native: nativeEncodeBase58, fast: encodeBase58Fast };
const viewLengths = [1, 2, 4, 6, 8, 10, 12, 16, 24, 32, 48, 64, 80];
const freshLengths = [8, 16, 24, 32, 40, 48, 56, 64];

// One case: encode `iterations` ranges, returns CPU µs per encode.
function measure(name, kind, len) {
  const f = encoders[name];
  const step = len + 3; // odd offsets too
  let sink = 0;
  const started = process.cpuUsage();
  if (kind === 'view') {
    if (name === 'bs58') {
      for (let i = 0; i < iterations; i++) {
        const at = (i & (SLOTS - 1)) * step;
        sink += bs58.encode(source.subarray(at, at + len)).length;
      }
    } else {
      for (let i = 0; i < iterations; i++) {
        const at = (i & (SLOTS - 1)) * step;
        sink += f(source, at, at + len).length;
      }
    }
  } else {
    for (let i = 0; i < iterations; i++) {
      const at = (i & (SLOTS - 1)) * step;
      const bytes = new Uint8Array(len);
      for (let k = 0; k < len; k++) bytes[k] = source[at + k];
      sink += (name === 'bs58' ? bs58.encode(bytes) : f(bytes)).length;
    }
  }
  const used = process.cpuUsage(started);
  if (sink === 0) throw new Error('nothing encoded');
  return (used.user + used.system) / iterations;
}

const names = Object.keys(encoders).filter((n) => n === 'bs58' || encoders[n] !== null);
const cases = [
  ...viewLengths.map((len) => ['view', len]),
  ...freshLengths.map((len) => ['fresh', len]),
];
const samples = new Map();
// bs58 is 10-30× slower: measure it at the lengths that matter, with fewer iterations' worth of time.
const wanted = (name, kind, len) => name !== 'bs58' || len === 32 || len === 64;
for (let r = 0; r < rounds; r++) {
  for (const [kind, len] of cases) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      if (!wanted(name, kind, len)) continue;
      const key = `${kind} ${len} ${name}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(measure(name, kind, len));
    }
  }
}

const stat = (key) => {
  const v = samples.get(key);
  if (v === undefined) return '';
  const s = [...v].sort((a, b) => a - b);
  return `${s[s.length >> 1].toFixed(3)} (${s[0].toFixed(3)})`;
};
console.log(`node ${process.version}, add-on: ${nativeStatus.loaded ? 'loaded' : nativeStatus.reason}`);
console.log(`NATIVE_BASE58_MIN_BYTES = ${NATIVE_BASE58_MIN_BYTES}, NATIVE_BASE58_MIN_BYTES_ON_HEAP = ${NATIVE_BASE58_MIN_BYTES_ON_HEAP}; ${rounds} rounds × ${iterations} encodes per case`);
console.log('µs of CPU per encode, median (best) over the rounds\n');
console.log(`| input | bytes | ${names.join(' | ')} |`);
console.log(`|---|---:|${names.map(() => '---:').join('|')}|`);
for (const [kind, len] of cases) {
  console.log(`| ${kind} | ${len} | ${names.map((n) => stat(`${kind} ${len} ${n}`)).join(' | ')} |`);
}
