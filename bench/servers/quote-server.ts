/**
 * Server process of the `quote` bench suite: the quote service under test, alone in its process so
 * that the load generator does not share its event loop.
 *
 * Fills a PoolCache from a manual simulator built in a process of its own (quote-fill.ts:
 * `--tokens` besides SOL and USDC, `--pools-per-kind` of each of the four kinds; 64 and 250 make
 * 1,000 pools), writes the request targets (`/quote?...`, every one checked to be a cache hit with
 * quoteFromCache) to `--paths`, and starts QuoteHttpServer on 127.0.0.1, any free port, with its
 * rate limiter on at `--rps`.
 * Prints one JSON line `{"ready":true,"port":...}` on stdout and runs until stdin closes (the suite
 * holds the pipe, so the server does not outlive it) or SIGTERM.
 *
 * Run with --expose-gc: the fill's garbage is collected and VmHWM reset (/proc/self/clear_refs)
 * before the ready line, so the suite's peak RSS is the service's, not the fill's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deserialize } from 'node:v8';

import { PoolCache } from '../../engine/cache/index.js';
import { quoteFromCache } from '../../engine/quote/cache-quoter.js';
import { QuoteHttpServer } from '../../engine/quote/quote-http-server.js';
import { RateLimiter } from '../../engine/quote/rate-limiter.js';
import { storePool } from '../../engine/quote/testing.js';
import { finishStartup } from './common.js';
import type { FillOutput } from './quote-fill.js';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '64' },
    'pools-per-kind': { type: 'string', default: '250' },
    rps: { type: 'string', default: '1000000' },
    paths: { type: 'string' },
    seed: { type: 'string', default: '7' },
  },
});
if (values.paths === undefined) throw new Error('--paths is required');

/** Trade sizes of the request mix, in USD of the input token. */
const TRADE_USD = [5, 50, 500, 5_000];
/** At most this many distinct request targets (they are used round-robin by the generators). */
const MAX_PATHS = 2_000;

/** The simulator's pools and tokens, built by quote-fill.js in a process of its own. */
function fill(): FillOutput {
  const out = `${values.paths!}.fill`;
  const script = fileURLToPath(new URL('./quote-fill.js', import.meta.url));
  const args = [script, '--seed', values.seed!, '--tokens', values.tokens!, '--pools-per-kind', values['pools-per-kind']!, '--out', out];
  const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`quote-fill exited with ${run.status ?? run.signal}`);
  const filled = deserialize(readFileSync(out)) as FillOutput;
  rmSync(out, { force: true });
  return filled;
}

async function main(): Promise<void> {
  const filled = fill();
  const views = filled.pools;
  // Fresh for the whole run: the bench measures cache hits, not staleness.
  const cache = new PoolCache({ maxPoolCount: Math.max(1000, views.length), stalenessThresholdMs: 24 * 3600_000 });
  let slot = 1_000n;
  for (const view of views) storePool(cache, view, slot++);

  // The request mix: both directions of every traded pair, a few trade sizes each, kept only when
  // the cache answers it (a hit); interleaved so consecutive requests hit different pairs.
  const tokens = new Map(filled.tokens.map((t) => [t.mint, t]));
  const pairs = new Map<string, [string, string]>();
  for (const v of views) {
    pairs.set(`${v.pool.tokenA}/${v.pool.tokenB}`, [v.pool.tokenA, v.pool.tokenB]);
    pairs.set(`${v.pool.tokenB}/${v.pool.tokenA}`, [v.pool.tokenB, v.pool.tokenA]);
  }
  const bySize: string[][] = TRADE_USD.map(() => []);
  for (const [input, output] of pairs.values()) {
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
  if (paths.length === 0) throw new Error('no request answers from the cache');
  writeFileSync(values.paths!, `${paths.join('\n')}\n`);
  const pools = cache.stats().totalPools;
  const pairCount = pairs.size / 2;

  const server = new QuoteHttpServer({ cache, rateLimiter: new RateLimiter({ rps: Number(values.rps) }) });
  const port = await server.start(0);
  finishStartup({ port, pools, pairs: pairCount, paths: paths.length, rateLimitRps: Number(values.rps) }, () => server.close());
}

main().catch((err: unknown) => {
  process.stderr.write(`bench quote-server: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
