/**
 * The shared setup of the service app tests: each part a test needs (a simulator, a bus prefix of
 * its own on the local NATS, a fresh PostgreSQL database, a Redis key space of its own) is opened
 * on demand, and `close()` takes everything down again, last opened first, every step even when an
 * earlier one failed (the first failure is thrown after the rest ran).
 *
 *   const fx = new PlatformFixture();
 *   beforeAll(async () => {
 *     const { sim } = await fx.manualSimulator({ seed: 41 });
 *     const bus = await fx.bus('PL');
 *     const database = await fx.database();
 *     app = fx.closing(await createPlannerApp(loadConfig(plannerSchema, { env: {}, flags: fx.serviceFlags() }), ...));
 *   });
 *   afterAll(() => fx.close());
 */
import type { NatsConnection, Subscription } from 'nats';

import { DEAD_LETTER_STREAM, PLATFORM_STREAMS } from '../../bus/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../../bus/testing/local-nats.js';
import { ErrorCode, TpError } from '../../errors.js';
import { loadConfig } from '../../config/loader.js';
import { startSimulator } from '../../executor/testing/submitter-sim.js';
import { createLogger } from '../../obs/logger.js';
import { simSchema } from '../../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../../sim/simulator.js';
import { migrateUp } from '../../state/db/migrations.js';
import { createServerDatabase, type TestDatabase } from '../../state/db/testing.js';
import { TEST_REDIS_URL, createRedisKeySpace, type TestKeySpace } from '../../state/kv/testing.js';

/** A simulator the test started: the chain in process, its servers on port 0. */
export interface FixtureSimulator {
  sim: Simulator;
  endpoints: SimEndpoints;
}

/** A subject and stream prefix of the test's own on the local NATS, with the test's connection. */
export interface FixtureBus {
  nc: NatsConnection;
  /** `PL_1a2b3c4d5e6f_`: prefixes every subject and stream name of the services under test. */
  prefix: string;
  /** The platform's streams (and the dead letters) under that prefix: deleted at close. */
  streams: string[];
}

/** The platform streams' names under `prefix`, dead letters included. */
export function platformStreamNames(prefix: string): string[] {
  return [...PLATFORM_STREAMS.map((s) => s.name), DEAD_LETTER_STREAM].map((n) => `${prefix}${n}`);
}

export class PlatformFixture {
  private readonly closers: { what: string; close: () => unknown }[] = [];
  private simulator: FixtureSimulator | undefined;
  private busPart: FixtureBus | undefined;
  private databasePart: TestDatabase | undefined;
  private keysPart: TestKeySpace | undefined;

  /** Runs `close` at the fixture's close, before what was registered earlier. */
  onClose(what: string, close: () => unknown): void {
    this.closers.push({ what, close });
  }

  /** Registers `closable.close()` (an app, a proxy, a client) and gives `closable` back. */
  closing<T extends { close(): unknown }>(closable: T, what = 'a closable'): T {
    this.onClose(what, () => closable.close());
    return closable;
  }

  /**
   * A simulator whose slots advance only by hand (no generated flow), started and one slot on:
   * the planner tests' market. `poolsPerKind` defaults to 2.
   */
  async manualSimulator(options: { seed: number; poolsPerKind?: number }): Promise<FixtureSimulator> {
    const flags = { seed: String(options.seed), 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': String(options.poolsPerKind ?? 2) };
    const sim = createSimulator(loadConfig(simSchema, { env: {}, flags }).values, { manual: true, logger: createLogger({ name: 'fixture-sim', level: process.env.TEST_LOG ?? 'silent' }) });
    this.onClose('the simulator', () => sim.close());
    const endpoints = await sim.start();
    sim.chain.advanceSlot(1);
    return (this.simulator = { sim, endpoints });
  }

  /** A running simulator with `slotMs` slots, real swaps and a block engine: the executor tests' chain. */
  async runningSimulator(slotMs?: number): Promise<FixtureSimulator> {
    const started = await startSimulator(slotMs);
    this.onClose('the simulator', () => started.sim.close());
    return (this.simulator = started);
  }

  /**
   * A connection to the local NATS and a prefix named after `tag` that no other test uses; at
   * close the platform streams under the prefix are deleted (with their consumers), then the
   * connection is closed.
   */
  async bus(tag: string): Promise<FixtureBus> {
    const nc = await connectLocal();
    this.onClose('the bus connection', () => nc.close());
    this.busPart = { nc, prefix: '', streams: [] };
    const { prefix, streams } = this.busPrefix(tag);
    return Object.assign(this.busPart, { prefix, streams });
  }

  /**
   * One more prefix named after `tag` on the fixture's connection, for a test that lays down
   * streams of its own; they are deleted at close, or at once with `dropStreams` (streams reserve
   * storage on the shared server).
   */
  busPrefix(tag: string): { prefix: string; streams: string[]; dropStreams(): Promise<void> } {
    const { nc } = this.requireBus();
    const prefix = `${uniqueName(tag)}_`;
    const streams = platformStreamNames(prefix);
    const dropStreams = (): Promise<void> => deleteStreams(nc, streams);
    this.onClose(`the streams under ${prefix}`, dropStreams);
    return { prefix, streams, dropStreams };
  }

  /**
   * A fresh, empty database on the shared PostgreSQL (the apps under test migrate it as they do in
   * a deployment), or migrated here with `migrate` for a test that writes rows first; dropped at close.
   */
  async database(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
    const database = await createServerDatabase();
    this.onClose('the test database', () => database.drop());
    if (options.migrate === true) await migrateUp(database.db);
    return (this.databasePart = database);
  }

  /** A key prefix of the test's own on the shared Redis; its keys are deleted at close. */
  async keySpace(): Promise<TestKeySpace> {
    const keys = await createRedisKeySpace();
    this.onClose('the test key space', () => keys.drop());
    return (this.keysPart = keys);
  }

  /**
   * Subscribes the fixture's connection to `subject` and hands every message, decoded, to `into`
   * until close.
   */
  collect<T>(subject: string, decode: (data: Uint8Array) => T, into: (value: T) => void): Subscription {
    const sub = this.requireBus().nc.subscribe(subject);
    this.onClose(`the subscription to ${subject}`, () => sub.unsubscribe());
    void (async () => {
      for await (const m of sub) into(decode(m.data));
    })();
    return sub;
  }

  /**
   * The flags every platform service takes, for the parts opened so far: the simulator's JSON-RPC,
   * the database, the key space, the bus prefix with the test streams' size, the ops port on 0.
   */
  serviceFlags(): Record<string, string> {
    const flags: Record<string, string> = { port: '0' };
    if (this.simulator !== undefined) flags['rpc-endpoints'] = this.simulator.endpoints.rpc;
    if (this.databasePart?.url !== undefined) flags['database-url'] = this.databasePart.url;
    if (this.keysPart !== undefined) Object.assign(flags, { 'redis-url': TEST_REDIS_URL, 'redis-key-prefix': this.keysPart.keys.prefix });
    if (this.busPart !== undefined) Object.assign(flags, { 'subject-prefix': this.busPart.prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE) });
    return flags;
  }

  /** Closes everything opened, last first; every step runs, and the first failure is thrown at the end. */
  async close(): Promise<void> {
    const failures: unknown[] = [];
    for (const closer of this.closers.splice(0).reverse()) {
      try {
        await closer.close();
      } catch (err) {
        failures.push(new TpError(ErrorCode.Internal, `closing ${closer.what} failed`, { cause: err, context: { closer: closer.what } }));
      }
    }
    this.simulator = undefined;
    this.busPart = undefined;
    this.databasePart = undefined;
    this.keysPart = undefined;
    if (failures.length > 0) throw failures[0];
  }

  private requireBus(): FixtureBus {
    if (this.busPart === undefined) throw new TpError(ErrorCode.Internal, 'PlatformFixture.bus() first');
    return this.busPart;
  }
}
