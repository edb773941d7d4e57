import { describe, expect, it } from 'vitest';

import { ValidationExit, formatReport, maskedReport } from './validate-config.js';

describe('tidepool validate-config output (issue 11, item 4)', () => {
  it('masks credentials in connection targets, errors and violations', () => {
    const report = maskedReport({
      violations: [{ path: '/rpcEndpoints/0', message: 'http://user:vpass@h is not reachable' }],
      keys: [],
      connections: [
        { name: 'redis', target: 'redis://:rpass@127.0.0.1:6379', ok: false, error: 'connect redis://:rpass@127.0.0.1:6379 refused' },
        { name: 'rpc', target: 'https://rpc.example.com/?api-key=K3Y', ok: true, latencyMs: 1 },
      ],
      exitCode: ValidationExit.Unreachable,
    });
    const text = `${formatReport(report)}${JSON.stringify(report)}`;
    for (const secret of ['vpass', 'rpass', 'K3Y']) expect(text, secret).not.toContain(secret);
    expect(text).toContain('redis://:***@127.0.0.1:6379');
  });
});
