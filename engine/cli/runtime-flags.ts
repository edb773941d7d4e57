/**
 * How every tidepool process runs Node, written where a process starts (the `tidepool` program's
 * first line, `npm start`, scripts/run-split.sh) and checked against this list by
 * test/runtime-flags.test.ts; the benchmarks start their servers the same way.
 *
 * - `--max-semi-space-size=2` (MB): V8's young generation grows to 16 MB semi-spaces under a
 *   request load, and the pages stay. A quote allocates little that lives, so a small young
 *   generation costs more frequent but shorter scavenges and keeps ~60 MB of RSS off a process
 *   whose live heap is ~30 MB (measured on the quote server with 1,000 pools).
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena (libuv's
 *   pool, V8's helpers, uWS), each kept at its high-water mark; two arenas measured ~10 MB less.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
export const NODE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
