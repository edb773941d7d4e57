/**
 * The simulator in a worker thread (see sim-thread.ts): builds the chain from the SimConfig it is
 * given, binds its servers and reports the endpoints and pools; answers `swap` probes (a swap sent
 * on one pool, reported when the entry batch holding it leaves the chain, with the monotonic
 * clock shared by every thread) and `close`.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { base58 } from '../chain/index.js';
import { createLogger } from '../obs/index.js';
import type { SimConfig } from './sim-config.js';
import { createSimulator } from './simulator.js';
import { swapTransaction } from './swap-transaction.js';
import type { SimThreadReply, SimThreadRequest } from './sim-thread.js';
import { ErrorCode, TpError } from '../errors.js';

interface SimWorkerData {
  config: SimConfig;
  logLevel: string;
}

const port = parentPort!;
const { config, logLevel } = workerData as SimWorkerData;
const sim = createSimulator(config, { logger: createLogger({ name: 'tidepool', level: logLevel }).child({ component: 'sim' }) });
const reply = (message: SimThreadReply): void => port.postMessage(message);

/** Probes waiting for their entry batch: signature bytes → id. */
const probes = new Map<number, { bytes: Buffer; signature: string }>();
sim.chain.onEntries((batch) => {
  if (probes.size === 0) return;
  const now = process.hrtime.bigint();
  const entries = Buffer.from(batch.entries.buffer, batch.entries.byteOffset, batch.entries.byteLength);
  for (const [id, p] of probes) {
    if (entries.indexOf(p.bytes) < 0) continue;
    probes.delete(id);
    reply({ type: 'swap-emitted', id, signature: p.signature, emittedNs: now.toString() });
  }
});

port.on('message', (message: SimThreadRequest) => {
  if (message.type === 'close') {
    void sim.close().then(() => {
      reply({ type: 'closed' });
      port.close();
    });
    return;
  }
  if (message.type === 'swap') {
    const chain = sim.chain;
    try {
      const info = chain.poolInfo(message.pool);
      if (info === undefined) throw new TpError(ErrorCode.NotFound, `no pool ${message.pool}`);
      const tx = swapTransaction(chain, chain.genesis.actors.traders[message.id % 4]!, info, { aToB: message.aToB, exactIn: true, amount: BigInt(message.amount), threshold: 0n });
      const signature = chain.sendTransaction(tx);
      probes.set(message.id, { bytes: Buffer.from(base58.decode(signature)), signature });
    } catch (err) {
      reply({ type: 'swap-refused', id: message.id, message: (err as Error).message });
    }
  }
});

sim.start().then(
  (endpoints) => reply({ type: 'started', endpoints, pools: sim.chain.pools().map((p) => ({ address: p.address, dex: p.dex })), reserves: sim.chain.genesis.lending.reserves.map((r) => r.reserve) }),
  (err: unknown) => reply({ type: 'failed', message: (err as Error).message }),
);
