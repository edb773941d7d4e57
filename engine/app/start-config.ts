/**
 * Settings of `tidepool start` (what `npm start` runs): the engine's settings and the simulator's
 * side by side. The simulator's flags gain a `sim-` prefix here (`--sim-seed`, `--sim-tx-rate`)
 * because both sides have a `--host`; their environment variables (SIM_*) and config-file keys
 * (`sim.*`) are unchanged.
 */
import type { ConfigSchema, LoadedConfig } from '../config/loader.js';
import { simSchema } from '../sim/sim-config.js';
import type { SimEndpoints } from '../sim/simulator.js';
import { engineSchema, type EngineConfig } from './engine-config.js';

function prefixFlags<S extends ConfigSchema>(schema: S, prefix: string): S {
  const out: ConfigSchema = {};
  for (const [key, def] of Object.entries(schema)) out[key] = def.flag === undefined ? def : { ...def, flag: `${prefix}${def.flag}` };
  return out as S;
}

export const startSchema = { ...engineSchema, ...prefixFlags(simSchema, 'sim-') };

/**
 * The engine's settings pointed at the simulator: the block-entry stream and the JSON-RPC are the
 * simulator's unless set explicitly (flag, environment or file).
 */
export function engineConfigUnderSim(loaded: LoadedConfig<typeof startSchema>, sim: SimEndpoints): LoadedConfig<typeof engineSchema> {
  const values: EngineConfig = { ...loaded.values };
  const sources = { ...loaded.sources };
  const [host, port] = splitHostPort(sim.stream);
  if (loaded.sources['blockstream.host'] === 'default') values['blockstream.host'] = host;
  if (loaded.sources['blockstream.port'] === 'default') values['blockstream.port'] = port;
  if (loaded.sources['rpc.endpoints'] === 'default') values['rpc.endpoints'] = [sim.rpc];
  return { values, sources, ...(loaded.file === undefined ? {} : { file: loaded.file }) };
}

function splitHostPort(hostPort: string): [string, number] {
  const at = hostPort.lastIndexOf(':');
  return [hostPort.slice(0, at).replace(/^\[|\]$/g, ''), Number(hostPort.slice(at + 1))];
}
