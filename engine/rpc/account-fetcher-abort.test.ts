import { describe, expect, it } from 'vitest';

import { AccountFetcher, type AccountsSource } from './account-fetcher.js';
import type { MultipleAccountsResult } from './rpc-client.js';

/** A source whose calls never answer on their own: it keeps each call's signal. */
class HeldSource implements AccountsSource {
  readonly signals: AbortSignal[] = [];
  getMultipleAccounts(_addresses: readonly string[], signal?: AbortSignal): Promise<MultipleAccountsResult> {
    if (signal !== undefined) this.signals.push(signal);
    return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('AccountFetcher under AbortSignals', () => {
  it('aborts a call once every fetch it serves was aborted', async () => {
    const source = new HeldSource();
    const fetcher = new AccountFetcher(source);
    const [a, b] = [new AbortController(), new AbortController()];
    const first = fetcher.fetch('A', { signal: a.signal });
    const second = fetcher.fetch('A', { signal: b.signal });
    const other = fetcher.fetch('B', { signal: b.signal });
    await tick();
    expect(source.signals).toHaveLength(1);
    const reason = new Error('deadline');
    a.abort(reason);
    await expect(first).rejects.toBe(reason);
    expect(source.signals[0]!.aborted).toBe(false); // B and the second fetch of A still wait
    b.abort(reason);
    await expect(second).rejects.toBe(reason);
    await expect(other).rejects.toBe(reason);
    expect(source.signals[0]!.aborted).toBe(true);
  });

  it('never aborts a call a fetch without a signal waits for', async () => {
    const source = new HeldSource();
    const fetcher = new AccountFetcher(source);
    const a = new AbortController();
    const watched = fetcher.fetch('A', { signal: a.signal });
    void fetcher.fetch('A').catch(() => undefined);
    await tick();
    a.abort(new Error('deadline'));
    await expect(watched).rejects.toThrow('deadline');
    expect(source.signals[0]!.aborted).toBe(false);
  });
});
