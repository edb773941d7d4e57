/**
 * What every long-running `tidepool` command shares: its settings (flags, environment, `--config
 * FILE`, defaults, in that order) and the options section of its help. The run-until-signal end
 * (SIGTERM, Ctrl-C, or the parent gone → close, log, exit 0) is the ServiceHost's (engine/app).
 */
import { parseCommandLine, type CommandOption } from '../config/index.js';
import { describeSchema, loadConfig, type ConfigSchema, type LoadedConfig, type LoadOptions } from '../config/index.js';
import type { CliIo } from './command.js';

const CONFIG_OPTION: Record<string, CommandOption> = { config: { type: 'string', description: 'config file' } };

/** The "Options" section of a service's --help: `--config FILE`, then every setting of `schema`. */
export function settingsHelp(schema: ConfigSchema): string {
  return [
    'Options (flag, environment variable; a JSON config file via --config FILE or TIDEPOOL_CONFIG):',
    '  --config FILE                                JSON config file with any of the settings below',
    describeSchema(schema),
  ].join('\n');
}

export interface CommandSettings<S extends ConfigSchema> {
  loaded: LoadedConfig<S>;
  /** The command's own options besides `--config` (e.g. `--pools-out`). */
  options: Record<string, string | boolean | string[] | undefined>;
}

/**
 * Reads a command's settings: `load` (default: the shared loader on `schema`) sees the flags, the
 * environment and the `--config` file. Throws the loader's TpError naming every bad setting.
 */
export function readCommandSettings<S extends ConfigSchema>(
  argv: string[],
  schema: S,
  io: CliIo,
  more: { options?: Record<string, CommandOption>; load?: (options: LoadOptions) => LoadedConfig<S> } = {},
): CommandSettings<S> {
  const { flags, options } = parseCommandLine(argv, schema, { ...CONFIG_OPTION, ...more.options });
  const load = more.load ?? ((o: LoadOptions) => loadConfig(schema, o));
  const loaded = load({ flags, env: io.env, ...(typeof options.config === 'string' ? { file: options.config } : {}) });
  return { loaded, options };
}

/** Starts `app`; when that fails, closes what it had opened and rethrows. */
export async function startOrClose<E>(app: { start(): Promise<E>; close(): Promise<void> }): Promise<E> {
  try {
    return await app.start();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
}
