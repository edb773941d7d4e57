/**
 * How every tidepool process runs Node, written where a process starts (the `tidepool` program's
 * first line, `npm start`, scripts/run-split.sh) and checked against this list by
 * test/runtime-flags.test.ts; the benchmarks start their servers the same way.
 *
 * - No cap on V8's young generation. A 2 MB cap (`--max-semi-space-size=2`) took the quote
 *   server's RSS after the busy-cache load from 171 to 115 MB, but under 2,000 pool updates/s it
 *   promoted every memoized answer and the busy p99 went from 23 ms to 882 ms (throughput 0.62x
 *   -> 0.44x of bare uWS); 8 MB gave 130 MB and 38 ms. Measured again once memo entries stopped
 *   surviving (engine/quote/memo-entry.ts; `npm run bench -- quote`, quiet box, same hour): no
 *   cap 130 MB, still p99 140 us, busy p99 310 us; 2 MB cap 103 MB, 259 us, 485 us. Nothing is
 *   promoted now, but the request path allocates ~5 KB a quote under updates, and a smaller
 *   young generation only scavenges more often. Latency is the product: no flag.
 * - `--no-parallel-scavenge`: V8 scavenges the young generation on the main thread alone. Its
 *   parallel scavenge hands the work to helper threads and waits for them; on a 2-core box whose
 *   other core runs a load generator, a scanner worker or another service, those threads wait for
 *   a core, and the main thread with them. With nothing surviving a scavenge (memo entries are
 *   rewritten in place) there is little to share: on the bench's quote server under 2,000 pool
 *   updates/s and 10,000 req/s (`node --trace-gc-nvp`, box at load average 6-9), a scavenge
 *   paused 8.4 ms on average with it (7.2 ms of it in `scavenge.parallel`) and 0.66-0.77 ms
 *   without.
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena (libuv's
 *   pool, V8's helpers, uWS), each kept at its high-water mark; two arenas measured ~10 MB less.
 */
export const NODE_FLAGS: readonly string[] = ['--no-parallel-scavenge'];
export const NODE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
