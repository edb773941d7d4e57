/**
 * Server process of the `quote` bench suite: the quote service under test, alone in its process so
 * that the load generator does not share its event loop.
 *
 * Fills a PoolCache from a manual simulator built in a process of its own (quote-fill.ts:
 * `--tokens` besides SOL and USDC, `--pools-per-kind` of each of the four kinds; 64 and 250 make
 * 1,000 pools), one pool at a time; writes the request targets (`/quote?...`, every one checked to
 * be a cache hit with quoteFromCache) to `--paths`; starts QuoteHttpServer (over a QuoteEngine) on 127.0.0.1, any free
 * port, with its rate limiter on at `--rps`. Prints one JSON line `{"ready":true,"port":...}` on
 * stdout, with a memory breakdown (`breakdown`: the heap the filled cache holds after a full
 * collection, the young generation's size, and what it keeps of the swap contexts), and runs until stdin closes (the suite
 * holds the pipe, so the server does not outlive it) or SIGTERM.
 *
 * `--two-hop-paths`: also writes targets of pairs without a pool of their own whose cache answer is
 * a two-hop route (through SOL or USDC), each checked with quoteFromCache.
 *
 * SIGUSR2 starts, and the next SIGUSR2 stops, a stream of `--updates-per-second` pool updates into
 * the cache (default 2,000/s, in 10 ms ticks, round-robin over the cached pools): each one the
 * pool's state and context stored again at a new slot, as the in-process scanner stores a pool
 * after a swap (every update moves its pair's version, so memoized quotes of the pair are
 * recomputed). On stop it writes how many were applied, and at what rate, to stderr, with where its
 * memory is (memoryParts), a moment after the suite has read VmRSS (it reads it as it sends the
 * signal).
 *
 * Like the quote service, it trims its C heap every 30 s once started (engine/common c-heap-trim.ts).
 *
 * Run with --expose-gc: the fill's garbage is collected and VmHWM reset (/proc/self/clear_refs)
 * before the ready line, so the suite's RSS is the service's, not the fill's peak; with
 * `--idle-gc`, the young generation the fill grew is given back first (an idle collection,
 * bench/servers/common.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deserialize } from 'node:v8';

import { PoolCache } from '../../engine/cache/index.js';
import { PackedBinArray, PackedTickArray, type DecodedPool } from '../../engine/dex/index.js';
import { quoteFromCache } from '../../engine/quote/cache-quoter.js';
import { QuoteEngine } from '../../engine/quote/quote-engine.js';
import { QuoteHttpServer } from '../../engine/quote-http/quote-http-server.js';
import { QuoteStreamServer } from '../../engine/quote-grpc/quote-stream-server.js';
import { CHeapTrim, RateLimiter } from '../../engine/common/index.js';
import type { SimPoolView, SimToken } from '../../engine/sim/market-view.js';
import { finishStartup, heapSpaceBytes, mb } from './common.js';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '64' },
    'pools-per-kind': { type: 'string', default: '250' },
    rps: { type: 'string', default: '1000000' },
    paths: { type: 'string' },
    'two-hop-paths': { type: 'string' },
    'updates-per-second': { type: 'string', default: '2000' },
    seed: { type: 'string', default: '7' },
    /** Also serve StreamBatchQuotes (QuoteStreamServer, default limits) on the same engine. */
    streams: { type: 'boolean', default: false },
    /** Idle, then collect, before the ready line (bench/servers/common.ts): the quote suite's RSS figure. */
    'idle-gc': { type: 'boolean', default: false },
  },
});
if (values.paths === undefined) throw new Error('--paths is required');

/** Trade sizes of the request mix, in USD of the input token. */
const TRADE_USD = [5, 50, 500, 5_000];
/** At most this many distinct request targets (they are used round-robin by the generators). */
const MAX_PATHS = 2_000;

const gc = (globalThis as { gc?: () => void }).gc;

/** Heap used after a full collection (when run with --expose-gc). */
function heapUsed(): number {
  gc?.();
  return process.memoryUsage().heapUsed;
}

/**
 * Where the process's resident memory is, in MB (Linux /proc/self, else V8's figures alone): V8's
 * spaces as committed (young generation, old, code, large objects), buffers outside the heap, the
 * C heap (glibc's brk heap, `[heap]` in smaps: what malloc holds, trimmed or not), anonymous
 * memory in all and file-backed pages (the node binary's code and data, the add-ons, libraries).
 */
function memoryParts(): Record<string, number> {
  const space = (name: string): number => mb(heapSpaceBytes(name));
  const m = process.memoryUsage();
  const parts: Record<string, number> = {
    rss: mb(m.rss),
    young: space('new_space'),
    old: space('old_space'),
    code: space('code_space'),
    largeObjects: space('large_object_space') + space('code_large_object_space'),
    heapUsed: mb(m.heapUsed),
    external: mb(m.external),
  };
  try {
    const kb = (text: string, field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
    const status = readFileSync('/proc/self/status', 'utf8');
    const smaps = readFileSync('/proc/self/smaps', 'utf8');
    const heapAt = smaps.indexOf('[heap]\n');
    parts.cHeap = heapAt < 0 ? 0 : mb(kb(smaps.slice(heapAt), 'Rss') * 1024);
    parts.anonymous = mb(kb(status, 'RssAnon') * 1024);
    parts.fileBacked = mb(kb(status, 'RssFile') * 1024);
  } catch {
    // Not Linux: V8's figures only.
  }
  return parts;
}

function reservesOf(pool: DecodedPool): [bigint, bigint] {
  return 'reserveA' in pool && typeof pool.reserveA === 'bigint' ? [pool.reserveA, pool.reserveB] : [0n, 0n];
}

/**
 * Fills `cache` from the simulator's pools, built by quote-fill.js in a process of its own and
 * read one pool at a time (as the service receives them): upsert, then the record is garbage.
 * Returns the tokens and the traded pairs (both directions).
 */
function fill(cache: PoolCache): { tokens: SimToken[]; pairs: [string, string][] } {
  const out = `${values.paths!}.fill`;
  const script = fileURLToPath(new URL('./quote-fill.js', import.meta.url));
  const args = [script, '--seed', values.seed!, '--tokens', values.tokens!, '--pools-per-kind', values['pools-per-kind']!, '--out', out];
  const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`quote-fill exited with ${run.status ?? run.signal}`);
  const file = readFileSync(out);
  rmSync(out, { force: true });
  let offset = 0;
  const next = (): unknown => {
    const length = file.readUInt32LE(offset);
    const value: unknown = deserialize(file.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
    return value;
  };
  const tokens = next() as SimToken[];
  const pairs = new Map<string, [string, string]>();
  let slot = 1_000n;
  while (offset < file.length) {
    const view = next() as SimPoolView;
    const [reserveA, reserveB] = reservesOf(view.pool);
    const { tokenA, tokenB } = view.pool;
    cache.upsert({ address: view.address, dex: view.dex, tokenA, tokenB, reserveA, reserveB, slot: slot++, pool: view.pool, context: view.ctx });
    pairs.set(`${tokenA}/${tokenB}`, [tokenA, tokenB]);
    pairs.set(`${tokenB}/${tokenA}`, [tokenB, tokenA]);
  }
  return { tokens, pairs: [...pairs.values()] };
}

/** What the cache keeps of the swap contexts (compact form: initialized ticks only, packed arrays). */
function contextCounts(cache: PoolCache): Record<string, number> {
  let tickArrays = 0;
  let ticksKept = 0;
  let tickSlots = 0;
  let binArrays = 0;
  let bins = 0;
  for (const address of cache.pools()) {
    const ctx = cache.contextAt(cache.idOf(address));
    for (const a of ctx?.tickArrays ?? []) {
      tickArrays++;
      if (a instanceof PackedTickArray) {
        tickSlots += a.slotCount;
        ticksKept += a.initializedCount;
        continue;
      }
      tickSlots += a.ticks.length;
      for (const t of a.ticks) if (t !== undefined) ticksKept++;
    }
    for (const a of ctx?.binArrays ?? []) {
      binArrays++;
      bins += a instanceof PackedBinArray ? a.binCount : a.bins.length;
    }
  }
  return { tickArrays, tickSlots, ticksKept, binArrays, bins };
}

/**
 * The request mix: both directions of every traded pair, a few trade sizes each, kept only when
 * the cache answers it (a hit); interleaved so consecutive requests hit different pairs.
 */
function requestTargets(cache: PoolCache, tokenList: readonly SimToken[], pairs: readonly [string, string][]): string[] {
  const tokens = new Map(tokenList.map((t) => [t.mint, t]));
  const bySize: string[][] = TRADE_USD.map(() => []);
  for (const [input, output] of pairs) {
    const token = tokens.get(input);
    if (token === undefined) continue;
    TRADE_USD.forEach((usd, k) => {
      const amount = BigInt(Math.max(1, Math.round((usd / token.referencePriceUsd) * 10 ** token.decimals)));
      try {
        quoteFromCache(cache, input, output, amount);
      } catch {
        return;
      }
      bySize[k]!.push(`/quote?input=${input}&output=${output}&amount=${amount}`);
    });
  }
  const paths: string[] = [];
  for (let i = 0; paths.length < MAX_PATHS && bySize.some((list) => i < list.length); i++) {
    for (const list of bySize) if (i < list.length && paths.length < MAX_PATHS) paths.push(list[i]!);
  }
  return paths;
}

/**
 * Two-hop request targets: both directions of token pairs with no pool of their own whose cache
 * answer is a two-hop route, a few trade sizes each (at most MAX_PATHS).
 */
function twoHopTargets(cache: PoolCache, tokenList: readonly SimToken[]): string[] {
  const paths: string[] = [];
  for (const a of tokenList) {
    for (const b of tokenList) {
      if (paths.length >= MAX_PATHS) return paths;
      if (a.mint === b.mint) continue;
      const x = cache.mintIdOf(a.mint);
      const y = cache.mintIdOf(b.mint);
      if (x < 0 || y < 0 || cache.pairVersion(x, y) !== 0) continue;
      for (const usd of TRADE_USD) {
        const amount = BigInt(Math.max(1, Math.round((usd / a.referencePriceUsd) * 10 ** a.decimals)));
        try {
          if (quoteFromCache(cache, a.mint, b.mint, amount).route.length !== 2) continue;
        } catch {
          continue;
        }
        paths.push(`/quote?input=${a.mint}&output=${b.mint}&amount=${amount}`);
      }
    }
  }
  return paths;
}

/** Pool updates into `cache` at `perSecond` while on (SIGUSR2 toggles). */
function updateStream(cache: PoolCache, perSecond: number): void {
  let timer: NodeJS.Timeout | undefined;
  let cursor = 0;
  let slot = 1_000_000n;
  let applied = 0;
  let startedAt = 0;
  const tick = (): void => {
    const addresses = cache.pools();
    const n = Math.max(1, Math.round(perSecond / 100));
    for (let i = 0; i < n; i++) {
      const entry = cache.entryAt(cache.idOf(addresses[cursor++ % addresses.length]!));
      if (entry === undefined) continue;
      const { address, dex, tokenA, tokenB, reserveA, reserveB, pool, context } = entry;
      cache.upsert({ address, dex, tokenA, tokenB, reserveA, reserveB, slot: slot++, ...(pool === undefined ? {} : { pool }), ...(context === undefined ? {} : { context }) });
      applied++;
    }
  };
  process.on('SIGUSR2', () => {
    if (timer === undefined) {
      applied = 0;
      startedAt = performance.now();
      timer = setInterval(tick, 10);
      return;
    }
    clearInterval(timer);
    timer = undefined;
    const seconds = (performance.now() - startedAt) / 1000;
    process.stderr.write(
      `bench quote-server: ${applied} pool updates applied in ${seconds.toFixed(1)} s (${Math.round(applied / seconds)}/s); ` +
        `memory after the load, MB: ${JSON.stringify(memoryParts())}\n`,
    );
  });
}

async function main(): Promise<void> {
  const heapBefore = heapUsed();
  // Fresh for the whole run: the bench measures cache hits, not staleness.
  const poolsPerKind = Number(values['pools-per-kind']);
  const cache = new PoolCache({ maxPoolCount: Math.max(1000, 4 * poolsPerKind), stalenessThresholdMs: 24 * 3600_000 });
  const { tokens, pairs } = fill(cache);
  const heapCache = heapUsed() - heapBefore;
  const paths = requestTargets(cache, tokens, pairs);
  if (paths.length === 0) throw new Error('no request answers from the cache');
  writeFileSync(values.paths!, `${paths.join('\n')}\n`);
  const twoHop = values['two-hop-paths'] === undefined ? [] : twoHopTargets(cache, tokens);
  if (values['two-hop-paths'] !== undefined) {
    if (twoHop.length === 0) throw new Error('no two-hop request answers from the cache');
    writeFileSync(values['two-hop-paths'], `${twoHop.join('\n')}\n`);
  }
  // SIGUSR2 has one meaning per server: with --streams it asks for the stream figures (quote-streams
  // suite), otherwise it toggles the pool updates (quote suite).
  if (values.streams !== true) updateStream(cache, Number(values['updates-per-second']));

  const engine = new QuoteEngine({ cache });
  const server = new QuoteHttpServer({ engine, rateLimiter: new RateLimiter({ rps: Number(values.rps) }) });
  const port = await server.start(0);
  // As the quote service does once started (engine/quote-service): the C heap trimmed every 30 s.
  new CHeapTrim().start();
  const budget = process.env.BENCH_STREAM_BUDGET;
  const stream = values.streams === true ? new QuoteStreamServer({ engine, ...(budget === undefined ? {} : { limits: { maxQuotesPerSecondPerClient: Number(budget) } }) }) : undefined;
  const grpcPort = stream === undefined ? undefined : await stream.start(0);
  // The young generation after the fill: its objects survive scavenges and grow it (see --idle-gc).
  const breakdown = { cacheHeapMB: mb(heapCache), youngGenerationMB: mb(heapSpaceBytes('new_space')), contexts: contextCounts(cache) };
  // The stream figures (shed pushes) go to stdout when the suite asks (SIGUSR2), for its report.
  if (stream !== undefined) {
    process.on('SIGUSR2', () => {
      process.stdout.write(`${JSON.stringify({ shedPushes: stream.shedPushes, coalescedPushes: stream.coalescedPushes, activeStreams: stream.activeStreams, saturatedTurns: stream.pacer.saturatedTurns })}\n`);
    });
  }
  // With --idle-gc (the quote suite, which passes it to its bare server too): idle before the ready
  // line, then collect, so the fill's young-generation growth is given back (bench/servers/common.ts).
  await finishStartup(
    { port, grpcPort, pools: cache.stats().totalPools, pairs: pairs.length / 2, paths: paths.length, twoHopPaths: twoHop.length, rateLimitRps: Number(values.rps), breakdown },
    async () => {
      await stream?.close();
      await server.close();
    },
    { idleGc: values['idle-gc'] === true },
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench quote-server: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
