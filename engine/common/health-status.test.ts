import { describe, expect, it } from 'vitest';

import { HealthStatus, healthHttpStatus } from './health-status.js';

describe('HealthStatus', () => {
  it('answers 200 while a service answers (ok, degraded) and 503 when it cannot or is draining', () => {
    expect(healthHttpStatus(HealthStatus.Ok)).toBe(200);
    expect(healthHttpStatus(HealthStatus.Degraded)).toBe(200);
    expect(healthHttpStatus(HealthStatus.Unavailable)).toBe(503);
    expect(healthHttpStatus(HealthStatus.Draining)).toBe(503);
  });

  it('is the one vocabulary the quote and external services answer with', async () => {
    const quote = await import('../quote/index.js');
    const external = await import('../external/index.js');
    expect(quote.HealthStatus).toBe(HealthStatus);
    expect(external.HealthStatus).toBe(HealthStatus);
  });
});
