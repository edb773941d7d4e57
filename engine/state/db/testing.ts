import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import { PgClient } from './pg-client.js';
import { PgliteClient } from './pglite-client.js';
import type { SqlClient } from './sql-client.js';

/**
 * Test support: a database of its own for each test file, on the shared PostgreSQL server (a
 * database with a random name, dropped afterwards) and on the embedded PostgreSQL (an in-memory
 * PGlite started from a cached initdb template), so every storage test runs on both.
 */

/** The shared server's admin URL (trust auth). */
export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  db: SqlClient;
  /** The URL of the database (real server only). */
  url?: string;
  /** Closes the client and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, empty database `tp_test_<random>` on the shared server. */
export async function createServerDatabase(): Promise<TestDatabase> {
  const name = `tp_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const db = new PgClient({ url: url.toString(), max: 4 });
  return {
    db,
    url: url.toString(),
    drop: async () => {
      await db.close().catch(() => undefined);
      const a = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

function pgliteVersion(): string {
  // The package exports no ./package.json; find it above its entry point.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const root = entry.slice(0, entry.lastIndexOf('/dist/'));
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** A fresh in-memory embedded database (initdb'd once per machine and PGlite version, then copied). */
export async function createEmbeddedDatabase(): Promise<TestDatabase> {
  const path = join(tmpdir(), `tidepool-pglite-template-${pgliteVersion()}.tar`);
  let db: PgliteClient;
  if (existsSync(path)) {
    db = await PgliteClient.open({ template: new Blob([readFileSync(path)]) });
  } else {
    db = await PgliteClient.open();
    const dump = Buffer.from(await (await db.dump()).arrayBuffer());
    const part = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(part, dump);
    renameSync(part, path);
  }
  return { db, drop: () => db.close() };
}

export const TEST_BACKENDS = [
  { name: 'postgres', create: createServerDatabase },
  { name: 'pglite', create: createEmbeddedDatabase },
] as const;
