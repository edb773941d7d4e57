/**
 * The DEX labels of the public swap API (a route plan's `swapInfo.label`, the `dexes` /
 * `excludeDexes` query parameters) for tidepool's DEX kinds. The simulated programs are the four
 * public protocols by layout, so each kind takes that protocol's label:
 *
 * | DEX kind | label |
 * |---|---|
 * | `dexa_amm` | `Raydium` (Raydium AMM v4) |
 * | `dexa_clmm` | `Raydium CLMM` |
 * | `dexb_dlmm` | `Meteora DLMM` |
 * | `dexc_whirlpool` | `Whirlpool` (Orca) |
 */
import { Dex } from '../dex/index.js';

export const DEX_LABELS: Readonly<Record<Dex, string>> = Object.freeze({
  [Dex.Amm]: 'Raydium',
  [Dex.Clmm]: 'Raydium CLMM',
  [Dex.Dlmm]: 'Meteora DLMM',
  [Dex.Whirlpool]: 'Whirlpool',
});

const BY_LOWER_LABEL: ReadonlyMap<string, Dex> = new Map(
  (Object.entries(DEX_LABELS) as [Dex, string][]).map(([dex, label]) => [label.toLowerCase(), dex]),
);

/** The label of a DEX kind; the kind itself for one without a label. */
export function labelOfDex(dex: string): string {
  return (DEX_LABELS as Record<string, string>)[dex] ?? dex;
}

/**
 * The DEX kind of a label, compared without case (`raydium clmm`); also accepts the kind's own
 * name (`dexa_clmm`). Undefined for anything else.
 */
export function dexOfLabel(text: string): Dex | undefined {
  const lower = text.trim().toLowerCase();
  const byLabel = BY_LOWER_LABEL.get(lower);
  if (byLabel !== undefined) return byLabel;
  return Object.prototype.hasOwnProperty.call(DEX_LABELS, lower) ? (lower as Dex) : undefined;
}
