/**
 * What a signal source runs: a model that reads market events and says, now and then, that a
 * token's price will rise or fall. The built-in one is trend-model.ts; a user's own model is any
 * ES module whose default export (or `createSignalModel`) builds one (loadSignalModel).
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

import { ErrorCode, TpError } from '../errors.js';
import type { MarketEvent, TradeSignal } from '../messages/index.js';

export interface SignalModel {
  /** The `source` of every signal it makes: the last token of their subject, `[A-Za-z0-9_-]{1,64}`. */
  readonly source: string;
  /**
   * Reads one market event (in stream order) and returns the signals it leads to, usually none.
   * It must depend only on the events it was given (their timestamps, not the wall clock), so a
   * backtest replays it exactly.
   */
  observe(event: MarketEvent): TradeSignal[];
  /** Figures about the model for metrics and logs (samples learned, hit rate…). */
  stats?(): Record<string, number>;
}

/** Settings handed to a model factory: the built-in model's, and whatever else the user set. */
export type SignalModelOptions = Record<string, unknown>;

export type SignalModelFactory = (options: SignalModelOptions) => SignalModel | Promise<SignalModel>;

function isModel(value: unknown): value is SignalModel {
  const m = value as SignalModel | null;
  return typeof m === 'object' && m !== null && typeof m.source === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(m.source) && typeof m.observe === 'function';
}

/**
 * The model of the ES module at `path` (relative to the working directory): its default export or
 * its `createSignalModel` export, called with `options`. TP_ERR_CONFIG_INVALID naming the setting
 * when the module cannot be loaded or does not build a model.
 */
export async function loadSignalModel(path: string, options: SignalModelOptions, setting = 'signals.model'): Promise<SignalModel> {
  let mod: { default?: unknown; createSignalModel?: unknown };
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as typeof mod;
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `${setting}: cannot load ${path}: ${(err as Error).message}`, { cause: err, context: { setting } });
  }
  const factory = typeof mod.createSignalModel === 'function' ? mod.createSignalModel : mod.default;
  if (typeof factory !== 'function') throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${path} exports neither a default function nor createSignalModel`, { context: { setting } });
  const model = await (factory as SignalModelFactory)(options);
  if (!isModel(model)) throw new TpError(ErrorCode.ConfigInvalid, `${setting}: ${path} did not build a model ({ source: [A-Za-z0-9_-]{1,64}, observe(event) })`, { context: { setting } });
  return model;
}
