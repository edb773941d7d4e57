import { loadConfig } from '../../config/index.js';
import { parseCommandLine } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { migrateUp, migrationStatus, openDatabase, databaseSchema } from '../../state/index.js';


import { settingsHelp } from '../service-command.js';
import type { Command } from '../command.js';

const HELP = `Usage: tidepool migrate up|status [options]

Brings the platform's PostgreSQL schema up to date (up), or shows which migrations are applied
(status). Migrations are the numbered SQL files of schemas/sql/, applied in order under an
advisory lock (two processes starting at once apply each one once), each in its own transaction,
recorded in tidepool_migrations with its checksum. Running up twice changes nothing. Where the
TimescaleDB extension is available, scanner_metrics is a hypertable with a continuous aggregate;
elsewhere a daily-partitioned table with an hourly materialized view.

With no DATABASE_URL, the embedded PostgreSQL (PGlite) in <data dir>/pglite is used.

${settingsHelp(databaseSchema)}
`;

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the PostgreSQL schema migrations (up) or show them (status)',
  help: HELP,
  settings: databaseSchema,
  async run(argv, io) {
    const { flags, options, positionals } = parseCommandLine(argv, databaseSchema, { config: { type: 'string', description: 'config file' } });
    const action = positionals[0];
    if (positionals.length !== 1 || (action !== 'up' && action !== 'status')) {
      throw new TpError(ErrorCode.Usage, 'expected `tidepool migrate up` or `tidepool migrate status`');
    }
    const { values } = loadConfig(databaseSchema, { flags, env: io.env, ...(typeof options.config === 'string' ? { file: options.config } : {}) });
    const db = await openDatabase({ url: values['database.url'], dataDir: values['database.dataDir'] });
    try {
      if (action === 'up') {
        const result = await migrateUp(db, { onApply: (m) => io.stdout.write(`applying ${m.file}\n`) });
        io.stdout.write(
          result.applied.length === 0
            ? `${db.target}: up to date (${result.skipped} migrations applied before)\n`
            : `${db.target}: applied ${result.applied.length} migration(s), ${result.skipped} already applied\n`,
        );
        return 0;
      }
      const status = await migrationStatus(db);
      io.stdout.write(`${db.target}\n`);
      for (const s of status) {
        const when = s.appliedAt === undefined ? '' : `  ${s.appliedAt.toISOString()}`;
        io.stdout.write(`  ${String(s.version).padStart(3, '0')} ${s.name.padEnd(24)} ${s.variant.padEnd(11)} ${s.state}${when}\n`);
      }
      return status.some((s) => s.state === 'changed') ? 1 : 0;
    } finally {
      await db.close();
    }
  },
};
