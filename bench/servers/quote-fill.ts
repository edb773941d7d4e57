/**
 * Fill process of bench/servers/quote-server.ts: builds a manual simulator and writes its tokens
 * and pools (address, dex, decoded pool, swap context: plain data) to `--out`, then exits. The
 * simulator lives and dies in this process, so the server's RSS after reading the file is the
 * cache's, not the simulator's (a worker thread would leave its freed malloc arena, about 50 MB,
 * in the server's RSS).
 *
 * File: a sequence of records, each a u32 LE length and that many bytes of v8.serialize: first
 * the tokens (SimToken[]), then one record per pool (SimPoolView). The server reads one pool at a
 * time, as the service receives them, so it never holds every decoded pool twice.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serialize } from 'node:v8';

import { loadConfig } from '../../engine/config/index.js';
import { createLogger } from '../../engine/obs/logger.js';
import type { SimPoolView, SimToken } from '../../engine/sim/market-view.js';
import { simSchema } from '../../engine/sim/sim-config.js';
import { createSimulator } from '../../engine/sim/simulator.js';

export interface FillOutput {
  pools: SimPoolView[];
  tokens: SimToken[];
}

/** One length-prefixed record of the fill file. */
function record(value: unknown): Buffer {
  const body = serialize(value);
  const head = Buffer.alloc(4);
  head.writeUInt32LE(body.length, 0);
  return Buffer.concat([head, body]);
}

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '7' },
    tokens: { type: 'string', default: '64' },
    'pools-per-kind': { type: 'string', default: '250' },
    out: { type: 'string' },
  },
});
if (values.out === undefined) throw new Error('--out is required');

const config = loadConfig(simSchema, {
  env: {},
  flags: {
    seed: values.seed!,
    'rpc-port': '0',
    'ws-port': '0',
    'stream-port': '0', 'geyser-port': '0',
    'http-port': '0',
    tokens: values.tokens!,
    'pools-per-kind': values['pools-per-kind']!,
  },
}).values;
const sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'bench-quote-fill', level: 'silent' }) });
const records = [record([...sim.chain.tokens()])];
for (const v of sim.chain.pools()) records.push(record({ address: v.address, dex: v.dex, label: v.label, pool: v.pool, ctx: v.ctx }));
writeFileSync(values.out, Buffer.concat(records));
await sim.close();
