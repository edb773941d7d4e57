/**
 * The `health.*` thresholds shared by the quote service, the scanner and the aggregator (issue 11,
 * item 6): /health fails (503, with the reason in the body) when, over the last `health.window`,
 * at least `health.minSamples` outcomes were seen and at least `health.maxErrorRate` of them failed
 * (engine/obs OutcomeWindow, judgeOutcomes). The scanner adds `health.maxEntryAge`
 * (scanner-config.ts).
 */
import { setting } from './loader.js';
import { duration, int, num } from './setting-types.js';

export interface HealthThresholdValues {
  windowMs: number;
  maxErrorRate: number;
  minSamples: number;
}

export const DEFAULT_HEALTH_THRESHOLDS: Readonly<HealthThresholdValues> = Object.freeze({ windowMs: 60_000, maxErrorRate: 0.5, minSamples: 10 });

export const healthSchema = {
  'health.window': setting({
    description: '/health: the span of recent outcomes it judges (quotes answered, pool reads, upstream quotes)',
    parse: duration({ min: 1000 }),
    default: DEFAULT_HEALTH_THRESHOLDS.windowMs,
    env: 'HEALTH_WINDOW',
    flag: 'health-window',
  }),
  'health.maxErrorRate': setting({
    description: '/health: error rate (0-1) over health.window at or above which the service reports failing (503, with the reason)',
    parse: num({ min: 0, max: 1, exclusiveMin: true }),
    default: DEFAULT_HEALTH_THRESHOLDS.maxErrorRate,
    env: 'HEALTH_MAX_ERROR_RATE',
    flag: 'health-max-error-rate',
  }),
  'health.minSamples': setting({
    description: '/health: outcomes needed in health.window before the error rate is judged',
    parse: int({ min: 1, max: 1_000_000 }),
    default: DEFAULT_HEALTH_THRESHOLDS.minSamples,
    env: 'HEALTH_MIN_SAMPLES',
    flag: 'health-min-samples',
  }),
};

export const HEALTH_KEYS = Object.keys(healthSchema) as (keyof typeof healthSchema)[];

/** The thresholds of loaded `health.*` settings (keys as in `healthSchema`). */
export function healthThresholdsOf(values: Record<string, unknown>): HealthThresholdValues {
  return {
    windowMs: (values['health.window'] as number | undefined) ?? DEFAULT_HEALTH_THRESHOLDS.windowMs,
    maxErrorRate: (values['health.maxErrorRate'] as number | undefined) ?? DEFAULT_HEALTH_THRESHOLDS.maxErrorRate,
    minSamples: (values['health.minSamples'] as number | undefined) ?? DEFAULT_HEALTH_THRESHOLDS.minSamples,
  };
}
