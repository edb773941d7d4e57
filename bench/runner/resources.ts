/**
 * What a benchmark suite leaves on the shared services, and how the runner removes it.
 *
 * A suite runs in its own process (suite-process.ts). Before it creates something outside that
 * process (JetStream streams, Redis keys, a PostgreSQL database) it names it in the run's ledger
 * (`trackResource`, a JSON line appended to the file `BENCH_RESOURCE_LEDGER` names). When the suite
 * process has ended, however it ended (finished, failed, killed at its time limit), the runner
 * removes everything the ledger names that still exists (`releaseResources`): a suite's own clean-up
 * is then a courtesy, not the only guarantee. Temporary files go under the suite's own TMPDIR and
 * processes die with its process group (suite-process.ts).
 *
 * Outside the runner (a suite run in-process by a test) the ledger is absent and tracking is a no-op.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

import { connect } from 'nats';

export const LEDGER_ENV = 'BENCH_RESOURCE_LEDGER';

export type BenchResource =
  /** Every JetStream stream whose name starts with `prefix`. */
  | { kind: 'nats-streams'; prefix: string; servers: string }
  /** Every Redis key that starts with `prefix`. */
  | { kind: 'redis-keys'; prefix: string; url: string }
  /** A PostgreSQL database, dropped through `adminUrl`. */
  | { kind: 'pg-database'; name: string; adminUrl: string };

/** Records `resource` in the ledger of the running suite, if there is one. Call it before creating it. */
export function trackResource(resource: BenchResource, env: NodeJS.ProcessEnv = process.env): void {
  const ledger = env[LEDGER_ENV];
  if (ledger === undefined || ledger === '') return;
  appendFileSync(ledger, `${JSON.stringify(resource)}\n`);
}

/**
 * `<TAG>_<random>_`: a stream-name prefix no other run uses, tracked so that every stream under it
 * is deleted when the suite ends.
 */
export function trackedStreamPrefix(tag: string, servers: string): string {
  const prefix = `${tag}_${randomBytes(6).toString('hex')}_`;
  trackResource({ kind: 'nats-streams', prefix, servers });
  return prefix;
}

/** `<tag>_<random>:`: a Redis key prefix, tracked so that its keys are deleted when the suite ends. */
export function trackedRedisPrefix(tag: string, url: string): string {
  const prefix = `${tag}_${randomBytes(6).toString('hex')}:`;
  trackResource({ kind: 'redis-keys', prefix, url });
  return prefix;
}

export function readLedger(path: string): BenchResource[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BenchResource);
}

const SAFE_PREFIX = /^[A-Za-z0-9_-]{8,}$/;
const SAFE_DB = /^[a-z0-9_]{8,63}$/;

/** Removes one resource; returns what was removed ('' when nothing was left). */
async function release(resource: BenchResource): Promise<string> {
  switch (resource.kind) {
    case 'nats-streams': {
      // A short or odd prefix could match someone else's streams: refuse it rather than guess.
      if (!SAFE_PREFIX.test(resource.prefix)) throw new Error(`refusing to delete streams under the prefix ${JSON.stringify(resource.prefix)}`);
      const nc = await connect({ servers: resource.servers, timeout: 2_000, reconnect: false });
      try {
        const jsm = await nc.jetstreamManager();
        const names: string[] = [];
        for await (const name of jsm.streams.names()) if (name.startsWith(resource.prefix)) names.push(name);
        for (const name of names) await jsm.streams.delete(name);
        return names.length === 0 ? '' : `deleted stream${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
      } finally {
        await nc.close();
      }
    }
    case 'redis-keys': {
      if (!SAFE_PREFIX.test(resource.prefix.replace(/:$/, ''))) throw new Error(`refusing to delete Redis keys under the prefix ${JSON.stringify(resource.prefix)}`);
      const { Redis } = await import('ioredis');
      const redis = new Redis(resource.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
      await redis.connect();
      try {
        let cursor = '0';
        let deleted = 0;
        const pattern = `${resource.prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) deleted += await redis.del(...keys);
        } while (cursor !== '0');
        return deleted === 0 ? '' : `deleted ${deleted} Redis key${deleted === 1 ? '' : 's'} under ${resource.prefix}`;
      } finally {
        redis.disconnect();
      }
    }
    case 'pg-database': {
      if (!SAFE_DB.test(resource.name)) throw new Error(`refusing to drop the database ${JSON.stringify(resource.name)}`);
      const pg = (await import('pg')).default;
      const admin = new pg.Client({ connectionString: resource.adminUrl });
      await admin.connect();
      try {
        const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [resource.name]);
        if (found.rowCount === 0) return '';
        await admin.query(`DROP DATABASE IF EXISTS ${resource.name} WITH (FORCE)`);
        return `dropped database ${resource.name}`;
      } finally {
        await admin.end();
      }
    }
  }
}

export interface ReleaseReport {
  /** What was still there and is now gone. */
  removed: string[];
  /** What could not be removed, and why. */
  failed: string[];
}

/** Removes everything the ledger names that still exists. Never throws: failures are reported. */
export async function releaseResources(ledgerPath: string): Promise<ReleaseReport> {
  const report: ReleaseReport = { removed: [], failed: [] };
  let resources: BenchResource[];
  try {
    resources = readLedger(ledgerPath);
  } catch (err) {
    report.failed.push(`ledger ${ledgerPath} unreadable: ${(err as Error).message}`);
    return report;
  }
  for (const resource of resources) {
    try {
      const removed = await release(resource);
      if (removed !== '') report.removed.push(removed);
    } catch (err) {
      report.failed.push(`${resource.kind} ${'prefix' in resource ? resource.prefix : resource.name}: ${(err as Error).message}`);
    }
  }
  return report;
}
