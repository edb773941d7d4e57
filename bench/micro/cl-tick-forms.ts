/**
 * CPU per concentrated-liquidity quote, and the V8 heap kept, on the three forms a tick array
 * takes (issue 23), in one process: `decoded` (every slot a Tick object, as the decoders give it),
 * `holey` (the cache's form before packing: the initialized Tick objects in their slots, holes
 * elsewhere) and `packed` (PackedTickArray, the cache's form now).
 *
 * Pools: random pools of both protocols (engine/dex/testing/random-cl-pools.ts), or with `--fill`
 * the concentrated pools of the quote bench's cache (bench/servers/quote-fill.js, seed 7, 64 tokens,
 * 250 pools per kind), random requests on each, the same on every form.
 *
 * CPU: each round times all requests `--repeat` times per form with process.cpuUsage (user +
 * system CPU, not wall time), the forms' order alternating by round; each round and the median
 * per form are printed, and packed / holey per round. Heap (run with --expose-gc): each form built
 * from the serialized decoded arrays, the decoded objects collected, the heap used after a full
 * collection against before (V8 heap, and the off-heap array buffers).
 *
 *   node --expose-gc dist-bench/bench/micro/cl-tick-forms.js [--fill] [--pools 400] [--requests 20] [--rounds 7] [--repeat 5]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deserialize, serialize } from 'node:v8';

import { toJson } from '../../engine/cli/command.js';
import { compactTickArray } from '../../engine/dex/compact-context.js';
import { quoteSwap } from '../../engine/dex/quote.js';
import { Dex, type ConcentratedPool, type DecodedPool, type SwapContext, type SwapRequest, type Tick, type TickArray } from '../../engine/dex/types.js';
import { Prng } from '../../engine/dex/testing/prng.js';
import { randomClPool, randomClRequest } from '../../engine/dex/testing/random-cl-pools.js';
import { median } from '../load-tools.js';

const { values } = parseArgs({
  options: {
    pools: { type: 'string', default: '400' },
    requests: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '7' },
    repeat: { type: 'string', default: '5' },
    seed: { type: 'string', default: '23' },
    fill: { type: 'boolean', default: false },
  },
});

type Form = 'decoded' | 'holey' | 'packed';
const FORMS: readonly Form[] = ['decoded', 'holey', 'packed'];

/** The cache's form before the packing: initialized tick objects in their slots. */
function holey(array: TickArray): TickArray {
  const kept = new Array<Tick>(array.ticks.length);
  array.ticks.forEach((t, slot) => {
    if (t.initialized) kept[slot] = t;
  });
  return { ...array, ticks: kept };
}

interface Case {
  pool: ConcentratedPool;
  contexts: Record<Form, SwapContext>;
  requests: SwapRequest[];
}

const FORM_OF: Record<Form, (array: TickArray) => TickArray> = { decoded: (a) => a, holey, packed: compactTickArray };

/** The concentrated pools of the quote bench's cache, decoded (quote-fill.js, as the quote server reads them). */
function fillPools(): { pool: ConcentratedPool; tickArrays: TickArray[] }[] {
  const out = join(tmpdir(), `cl-tick-forms-${process.pid}.fill`);
  const script = fileURLToPath(new URL('../servers/quote-fill.js', import.meta.url));
  const run = spawnSync(process.execPath, [script, '--seed', '7', '--tokens', '64', '--pools-per-kind', '250', '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`quote-fill exited with ${run.status ?? run.signal}`);
  const file = readFileSync(out);
  rmSync(out, { force: true });
  const pools: { pool: ConcentratedPool; tickArrays: TickArray[] }[] = [];
  for (let offset = 0, first = true; offset < file.length; first = false) {
    const length = file.readUInt32LE(offset);
    const value = deserialize(file.subarray(offset + 4, offset + 4 + length)) as { pool: DecodedPool; ctx?: SwapContext };
    offset += 4 + length;
    if (first || (value.pool.dex !== Dex.Clmm && value.pool.dex !== Dex.Whirlpool)) continue;
    pools.push({ pool: value.pool, tickArrays: [...(value.ctx?.tickArrays ?? [])] });
  }
  return pools;
}

const rng = new Prng(Number(values.seed));
const sources = values.fill ? fillPools() : Array.from({ length: Number(values.pools) }, (_, i) => randomClPool(rng, i % 2 === 0 ? Dex.Whirlpool : Dex.Clmm));
const cases: Case[] = sources.map(({ pool, tickArrays }) => ({
  pool,
  requests: Array.from({ length: Number(values.requests) }, () => randomClRequest(rng, pool)),
  contexts: { decoded: { tickArrays }, holey: { tickArrays: tickArrays.map(holey) }, packed: { tickArrays: tickArrays.map(compactTickArray) } },
}));

// The forms must quote alike before their times mean anything.
let quotes = 0;
let ok = 0;
for (const c of cases) {
  for (const req of c.requests) {
    const expected = toJson(quoteSwap(c.pool, req, c.contexts.decoded));
    for (const form of FORMS) {
      const got = toJson(quoteSwap(c.pool, req, c.contexts[form]));
      if (got !== expected) throw new Error(`${form} quotes differently: ${got} vs ${expected}`);
    }
    quotes++;
    if (quoteSwap(c.pool, req, c.contexts.decoded).ok) ok++;
  }
}

let sink = 0;
function cpuPerQuote(form: Form, repeat: number): number {
  const before = process.cpuUsage();
  for (let r = 0; r < repeat; r++) {
    for (const c of cases) {
      const ctx = c.contexts[form];
      for (const req of c.requests) if (quoteSwap(c.pool, req, ctx).ok) sink++;
    }
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (repeat * quotes);
}

const per: Record<Form, number[]> = { decoded: [], holey: [], packed: [] };
const ratios: number[] = [];
cpuPerQuote('decoded', 1); // warm-up: JIT, tick price memo
cpuPerQuote('holey', 1);
cpuPerQuote('packed', 1);
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? FORMS : [...FORMS].reverse();
  const got = {} as Record<Form, number>;
  for (const form of order) got[form] = cpuPerQuote(form, Number(values.repeat));
  for (const form of FORMS) per[form].push(got[form]);
  ratios.push(got.packed / got.holey);
  process.stdout.write(`round ${round + 1}: ${FORMS.map((f) => `${f} ${got[f].toFixed(2)} µs`).join(', ')}; packed / holey ${(got.packed / got.holey).toFixed(3)}\n`);
}
// Heap kept per form: built from the serialized decoded arrays, which are then garbage.
const gc = (globalThis as { gc?: () => void }).gc;
const serialized = sources.map((c) => serialize(c.tickArrays));
const mb = (n: number): string => (n / 1e6).toFixed(2);
/**
 * The heap kept of every pool's arrays made into a form (`keep`), minus what the same steps keep
 * when nothing is kept (the measurement's own, ~1.6 MB); its locals die when it returns.
 */
function heapKept(keep: (array: TickArray) => unknown, collect: () => void): { heap: number; buffers: number } {
  collect();
  const before = process.memoryUsage();
  const kept = serialized.map((bytes) => (deserialize(bytes) as TickArray[]).map(keep));
  collect();
  const after = process.memoryUsage();
  if (kept.length !== serialized.length) throw new Error('lost arrays');
  return { heap: after.heapUsed - before.heapUsed, buffers: after.arrayBuffers - before.arrayBuffers };
}
let heapText = 'run with --expose-gc';
if (gc !== undefined) {
  heapKept(() => null, gc);
  const own = heapKept(() => null, gc).heap;
  heapText = `${FORMS.map((f) => {
    const { heap, buffers } = heapKept(FORM_OF[f], gc);
    return `${f} ${mb(heap - own)} MB heap + ${mb(buffers)} MB array buffers`;
  }).join('; ')} (${sources.reduce((n, c) => n + c.tickArrays.length, 0)} arrays; the measurement's own ${mb(own)} MB taken off)`;
}
process.stdout.write(`heap kept per form: ${heapText}\n`);
process.stdout.write(
  `${cases.length} pools, ${quotes} requests (${ok} quoted, the rest refused), CPU per quote, median of ${values.rounds} rounds: ` +
    `${FORMS.map((f) => `${f} ${median(per[f]).toFixed(2)} µs`).join(', ')}; packed / holey median ${median(ratios).toFixed(3)} (${sink > 0 ? 'ok' : '-'})\n`,
);
