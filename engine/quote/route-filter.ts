/**
 * A request's RouteFilter (quote-request.ts) as one small number, the form the engine tests pools
 * with and the memo keys on: bits 0-3 the DEXes allowed (one bit per engine/cache DexCode 1-4),
 * bit 4 "direct routes only". Two filters with the same meaning (no filter, or `dexes` naming every
 * DEX) give the same key, so they share memo entries; names that are no DEX allow nothing.
 */
import { DexCode, dexCodeOf } from '../cache/index.js';
import { DEX_KINDS, type Dex } from '../dex/index.js';
import { DEX_LABELS, dexOfLabel } from '../swap-api/index.js';
import { badParameter, type QuoteFailure } from './quote-failure.js';
import type { RouteFilter } from './quote-request.js';

/** Every DEX allowed. */
export const ALL_DEXES_MASK = 0b1111;
/** The bit of `onlyDirectRoutes`. */
export const DIRECT_ONLY_BIT = 0b10000;
/** The key of a request without a filter: every DEX, two-hop routes allowed. */
export const NO_FILTER_KEY = ALL_DEXES_MASK;
/** Keys are below this (the memo's stride). */
export const FILTER_KEY_COUNT = 32;

/** The bit of DEX code `code` (1-4) in a key; 0 for DexCode.None. */
export function dexBit(code: number): number {
  return code === DexCode.None ? 0 : 1 << (code - 1);
}

/** The key of `filter` (undefined: NO_FILTER_KEY). A few Set lookups; no allocation. */
export function routeFilterKey(filter: RouteFilter | undefined): number {
  if (filter === undefined) return NO_FILTER_KEY;
  let mask = 0;
  for (let i = 0; i < DEX_KINDS.length; i++) {
    const dex = DEX_KINDS[i]!;
    if (filter.dexes !== undefined && !filter.dexes.has(dex)) continue;
    if (filter.excludeDexes?.has(dex) === true) continue;
    mask |= dexBit(dexCodeOf(dex));
  }
  return filter.onlyDirectRoutes ? mask | DIRECT_ONLY_BIT : mask;
}

/** True when `key` lets a pool of DEX code `code` be used. */
export function allowsDexCode(key: number, code: number): boolean {
  return (key & dexBit(code)) !== 0;
}

/** True when `key` lets a pool of DEX `dex` (an engine DEX name) be used. */
export function allowsDex(key: number, dex: string): boolean {
  return allowsDexCode(key, dexCodeOf(dex));
}

/** True when `key` allows routes through an intermediate token. */
export function allowsMultiHop(key: number): boolean {
  return (key & DIRECT_ONLY_BIT) === 0;
}

/** True when `key` leaves a DEX out (some pool may be refused for its DEX). */
export function filtersDexes(key: number): boolean {
  return (key & ALL_DEXES_MASK) !== ALL_DEXES_MASK;
}

const KNOWN_DEXES = (Object.entries(DEX_LABELS) as [Dex, string][]).map(([dex, label]) => `${dex} (${label})`).join(', ');

/**
 * A DEX list: an array of names, or one comma-separated string (the query form). Each name is a DEX
 * kind (`dexa_amm`) or its public label (`Raydium`, any case). `strict`: an unknown name is a 400
 * naming the parameter (the /v1 paths); otherwise it is dropped and matches nothing, as the public
 * swap API does (`GET /swap/v1/quote`). Undefined for absent or empty (no filter).
 */
export function parseDexList(raw: unknown, parameter: string, strict: boolean): ReadonlySet<string> | undefined | QuoteFailure {
  if (raw === undefined || raw === null) return undefined;
  let names: unknown[];
  if (typeof raw === 'string') names = raw.split(',');
  else if (Array.isArray(raw)) names = raw;
  else return badParameter(parameter, `parameter ${parameter} must be an array of DEX names or a comma-separated string`);
  const set = new Set<string>();
  let given = 0;
  for (const name of names) {
    if (typeof name !== 'string') return badParameter(parameter, `parameter ${parameter} must hold strings`);
    if (name.trim() === '') continue;
    given++;
    const dex = dexOfLabel(name);
    if (dex !== undefined) set.add(dex);
    else if (strict) return badParameter(parameter, `parameter ${parameter}: unknown DEX ${JSON.stringify(name.trim())} (known: ${KNOWN_DEXES})`);
  }
  // Names given but none known (lenient form): an empty set, which admits no pool.
  return given === 0 ? undefined : set;
}

/** The route filter of the three parameters; undefined when none narrows anything. */
export function routeFilterOf(dexes: ReadonlySet<string> | undefined, excludeDexes: ReadonlySet<string> | undefined, onlyDirectRoutes: boolean): RouteFilter | undefined {
  if (dexes === undefined && excludeDexes === undefined && !onlyDirectRoutes) return undefined;
  return { dexes, excludeDexes, onlyDirectRoutes };
}
