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

/** Probes waiting for their entry batch: signature bytes → id, with the times of their stages so far. */
const probes = new Map<number, { bytes: Buffer; signature: string; appliedNs?: bigint; handedNs?: bigint }>();
/** The probe whose account writes `writes` are (by the transaction's first signature). */
function probeOf(signature: Uint8Array | undefined): { appliedNs?: bigint; handedNs?: bigint } | undefined {
  if (signature === undefined || probes.size === 0) return undefined;
  for (const p of probes.values()) if (p.bytes.equals(signature)) return p;
  return undefined;
}
// Before the servers' listeners (sim.start adds them): the chain applied the probe.
sim.chain.onAccountWrites((_writes, _slot, signature) => {
  const p = probeOf(signature);
  if (p !== undefined) p.appliedNs = process.hrtime.bigint();
});
sim.chain.onEntries((batch) => {
  if (probes.size === 0) return;
  const now = process.hrtime.bigint();
  const entries = Buffer.from(batch.entries.buffer, batch.entries.byteOffset, batch.entries.byteLength);
  for (const [id, p] of probes) {
    if (entries.indexOf(p.bytes) < 0) continue;
    probes.delete(id);
    const stages = { appliedNs: (p.appliedNs ?? now).toString(), handedNs: (p.handedNs ?? now).toString() };
    // The sockets written by this turn's sends are flushed before the next check phase's immediates.
    setImmediate(() => reply({ type: 'swap-emitted', id, signature: p.signature, emittedNs: now.toString(), ...stages, flushedNs: process.hrtime.bigint().toString() }));
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
      if (info === undefined) throw new TpError(ErrorCode.NotFound, `no pool ${message.pool}`, { context: { address: message.pool } });
      const tx = swapTransaction(chain, chain.genesis.actors.traders[message.id % 4]!, info, { aToB: message.aToB, exactIn: true, amount: BigInt(message.amount), threshold: 0n });
      const signature = chain.sendTransaction(tx);
      probes.set(message.id, { bytes: Buffer.from(base58.decode(signature)), signature });
    } catch (err) {
      reply({ type: 'swap-refused', id: message.id, message: (err as Error).message });
    }
  }
});

sim.start().then(
  (endpoints) => {
    // After the servers' listeners: the Geyser server has handed the probe's writes to its streams.
    sim.chain.onAccountWrites((_writes, _slot, signature) => {
      const p = probeOf(signature);
      if (p !== undefined) p.handedNs = process.hrtime.bigint();
    });
    reply({ type: 'started', endpoints, pools: sim.chain.pools().map((p) => ({ address: p.address, dex: p.dex })), reserves: sim.chain.genesis.lending.reserves.map((r) => r.reserve) });
  },
  (err: unknown) => reply({ type: 'failed', message: (err as Error).message }),
);
