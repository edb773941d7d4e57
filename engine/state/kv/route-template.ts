/**
 * Route templates (spec 03's `route_template:{hash}`, TTL 12 h): every account a route's pre-trade
 * re-read needs, so an executor that has not read the route's pools yet (just started, or another
 * executor traded the route) reads them all in ONE getMultipleAccounts instead of two rounds (the
 * pools, then the accounts their decodes point to). Written by the executor after its read
 * (engine/executor/route-pools.ts) and by the planner when it first publishes an opportunity on a
 * route (engine/planner/route-template-writer.ts), both with these functions: here, under both.
 *
 * - The hash: SHA-256 over the route's identity as the planner published it, hop by hop: pool, DEX,
 *   input mint, output mint (so a route and its reverse, or the same pools in another order, are
 *   different routes). 32 hex characters.
 * - The value (`RouteTemplateValue`, engine/state/kv/key-space.ts): per pool in route order, its
 *   owner program and DEX and the accounts the pool loader planned to read beside it (tick or bin
 *   arrays, Raydium's AmmConfig, reserve vaults, mints), in reading order.
 * - The template is a prefetch, never trusted for state: the loader decodes the pools and plans
 *   their accounts as always, reading in a second round whatever the template did not name.
 */
import { hash } from 'node:crypto';

import type { RouteTemplatePool, RouteTemplateValue } from './key-space.js';

/** What the pool loader planned to read beside a pool (engine/pools' PlannedAccounts has this shape). */
export interface RouteTemplatePlan {
  owner: string;
  dex: string;
  accounts: readonly string[];
}

/** What identifies a route: its hops as the opportunity carries them. */
export interface RouteTemplateHop {
  pool: string;
  dex: string;
  inputMint: string;
  outputMint: string;
}

/** The `{hash}` of a route's template key. */
export function routeTemplateHash(route: readonly RouteTemplateHop[]): string {
  const identity = route.map((h) => `${h.pool}:${h.dex}:${h.inputMint}>${h.outputMint}`).join('|');
  return hash('sha256', `route-template/v1|${identity}`, 'hex').slice(0, 32);
}

/** The template of `pools` (distinct, route order) from what the loader planned; undefined when a pool has no plan. */
export function routeTemplateOf(pools: readonly string[], planned: (pool: string) => RouteTemplatePlan | undefined, writtenAt: number): RouteTemplateValue | undefined {
  const entries: RouteTemplatePool[] = [];
  for (const address of pools) {
    const plan = planned(address);
    if (plan === undefined) return undefined;
    entries.push({ address, owner: plan.owner, dex: plan.dex, accounts: [...plan.accounts] });
  }
  return { version: 1, writtenAt, pools: entries };
}

/** Every account the template names beside the pools, in order, each once. */
export function prefetchOf(template: RouteTemplateValue): string[] {
  const out = new Set<string>();
  for (const p of template.pools) for (const a of p.accounts) out.add(a);
  return [...out];
}

/** Whether a template read from the store names the same pools, owners, DEXes and accounts as `now`. */
export function sameRouteTemplate(stored: RouteTemplateValue, now: RouteTemplateValue): boolean {
  if (stored.version !== now.version || !Array.isArray(stored.pools) || stored.pools.length !== now.pools.length) return false;
  for (let i = 0; i < now.pools.length; i++) {
    const a = stored.pools[i]!;
    const b = now.pools[i]!;
    if (a.address !== b.address || a.owner !== b.owner || a.dex !== b.dex || !Array.isArray(a.accounts) || a.accounts.length !== b.accounts.length) return false;
    for (let j = 0; j < b.accounts.length; j++) if (a.accounts[j] !== b.accounts[j]) return false;
  }
  return true;
}

/** A value read from the store that has the template's shape (a value of another version is treated as none). */
export function isRouteTemplate(value: unknown): value is RouteTemplateValue {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<RouteTemplateValue>;
  return v.version === 1 && Array.isArray(v.pools) && v.pools.every((p) => typeof p === 'object' && p !== null && typeof p.address === 'string' && Array.isArray(p.accounts) && p.accounts.every((a) => typeof a === 'string'));
}
