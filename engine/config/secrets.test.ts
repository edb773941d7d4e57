import { describe, expect, it } from 'vitest';

import { isTpError } from '../errors.js';
import { loadConfig, redactedValues, setting } from './loader.js';
import { str, uniqueList, url } from './setting-types.js';

/** Issue 11, item 4: no password, key or token of a setting's value in /config, logs or errors. */
const schema = {
  'rpc.endpoints': setting({ description: 'RPC', parse: uniqueList(url(), { min: 1 }), default: ['http://127.0.0.1:8899'], env: 'RPC_ENDPOINTS' }),
  quoteUrl: setting({ description: 'quote API', parse: url(), default: 'http://127.0.0.1/quote', env: 'QUOTE_URL' }),
  token: setting({ description: 'a token', parse: str(), default: '', env: 'A_TOKEN', secret: true }),
};

describe('settings holding secrets inside their values', () => {
  it('shows URLs with user info and key parameters masked (what /config and start-up logs show)', () => {
    const loaded = loadConfig(schema, { env: { RPC_ENDPOINTS: 'http://user:pass@host:8899,https://rpc.example.com/?api-key=K3Y', QUOTE_URL: 'https://q.example.com/quote?token=T0K', A_TOKEN: 'tok' } });
    // The values themselves stay usable.
    expect(loaded.values['rpc.endpoints'][0]).toBe('http://user:pass@host:8899');
    const shown = JSON.stringify(redactedValues(schema, loaded));
    for (const secret of ['pass', 'K3Y', 'T0K', '"tok"']) expect(shown, secret).not.toContain(secret);
    expect(shown).toContain('http://user:***@host:8899');
    expect(shown).toContain('api-key=***');
  });

  it('masks them in configuration errors', () => {
    let message = '';
    try {
      loadConfig(schema, { env: { RPC_ENDPOINTS: 'http://user:pass@host:8899,ftp://u:secretpw@h/?api-key=K3Y' } });
    } catch (err) {
      if (!isTpError(err)) throw err;
      message = err.message;
    }
    expect(message).toContain('rpc.endpoints');
    for (const secret of ['pass@', 'secretpw', 'K3Y']) expect(message, secret).not.toContain(secret);
  });
});
