/**
 * Fill process of bench/servers/quote-server.ts: builds a manual simulator and writes its pools
 * (address, dex, decoded pool, swap context: plain data) and tokens to `--out` with v8.serialize,
 * then exits. The simulator lives and dies in this process, so the server's RSS after reading the
 * file is the cache's, not the simulator's (a worker thread would leave its freed malloc arena,
 * about 50 MB, in the server's RSS).
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
    'stream-port': '0',
    'http-port': '0',
    tokens: values.tokens!,
    'pools-per-kind': values['pools-per-kind']!,
  },
}).values;
const sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'bench-quote-fill', level: 'silent' }) });
const out: FillOutput = {
  pools: sim.chain.pools().map((v) => ({ address: v.address, dex: v.dex, label: v.label, pool: v.pool, ctx: v.ctx })),
  tokens: [...sim.chain.tokens()],
};
writeFileSync(values.out, serialize(out));
await sim.close();
