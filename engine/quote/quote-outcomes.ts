/**
 * What the quote service's answers were lately, for /health (issue 11, item 6): a quote service
 * that answers 503/504 to every request is not `degraded`, it is failing. Every answer of
 * QuoteEngine.quote is counted: ok, or failed when its status is 5xx (the cache and the RPC fallback
 * could not answer, or not in time). Not counted: refusals caused by the request (4xx: bad
 * parameters, unknown token, no pool), TP_ERR_NO_VALID_QUOTES (also what an amount beyond a pool's
 * liquidity gets, so a client could otherwise fail everyone's health; a cache whose pools are all
 * stale shows in `fresh_pools`), and shutting down (health says draining).
 * `judge()` answers with the reason to report failing, or undefined; /ready may call it too.
 */
import { DEFAULT_HEALTH_THRESHOLDS, type HealthThresholdValues } from '../config/index.js';
import { httpStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { OutcomeWindow, judgeOutcomes, type WindowedOutcomes } from '../obs/index.js';

export class QuoteOutcomes {
  private ok = 0;
  private failed = 0;
  private readonly window: OutcomeWindow;

  constructor(readonly thresholds: HealthThresholdValues = DEFAULT_HEALTH_THRESHOLDS) {
    this.window = new OutcomeWindow(thresholds.windowMs);
  }

  /** Counts one answer (two integer operations on the hot path). */
  count(result: { ok: true } | { ok: false; code: string }): void {
    if (result.ok) this.ok++;
    else if (result.code !== ErrorCode.NoValidQuotes && httpStatusOf(result.code) >= 500) this.failed++;
  }

  /** The window's counts and, when they fail the thresholds, why. */
  judge(): { recent: WindowedOutcomes; reason: string | undefined } {
    const recent = this.window.observe({ ok: this.ok, failed: this.failed });
    return { recent, reason: judgeOutcomes(recent, this.thresholds, 'quotes') };
  }
}
