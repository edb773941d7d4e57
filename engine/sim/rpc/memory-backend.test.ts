import { describe, expect, it } from 'vitest';

import { rpcError } from '../chain-backend.js';
import { MemoryBackend } from './memory-backend.js';
import { account, address } from './testing/test-servers.js';

function tx(signatureByte: number): Uint8Array {
  return Uint8Array.from([1, ...new Array(64).fill(signatureByte), 0, 0, 0]);
}

describe('MemoryBackend', () => {
  it('trails confirmed and finalized behind the processed slot', () => {
    const b = new MemoryBackend({ slot: 10n, confirmedLag: 2n, finalizedLag: 5n });
    expect([b.slot('processed'), b.slot('confirmed'), b.slot('finalized'), b.slot()]).toEqual([10n, 8n, 5n, 10n]);
    expect(new MemoryBackend({ slot: 3n }).slot('finalized')).toBe(0n);
  });

  it('fires slot listeners at each new slot and account listeners for changes at the last one', () => {
    const b = new MemoryBackend({ slot: 10n });
    const slots: bigint[][] = [];
    const changes: [number | null, bigint][] = [];
    const offSlot = b.onSlot((slot, parent, root) => slots.push([slot, parent, root]));
    const offAccount = b.onAccount(address(1), (a, slot) => changes.push([a === null ? null : a.data.length, slot]));
    b.advanceSlot(2, [[address(1), account(new Uint8Array(4))]]);
    b.setAccount(address(1), null);
    expect(slots).toEqual([
      [11n, 10n, 0n],
      [12n, 11n, 0n],
    ]);
    expect(changes).toEqual([
      [4, 12n],
      [null, 12n],
    ]);
    offSlot();
    offAccount();
    expect(b.listenerCount('slot')).toBe(0);
    expect(b.listenerCount('account')).toBe(0);
  });

  it('records sent transactions, whose status follows the slots', () => {
    const b = new MemoryBackend({ slot: 50n, finalizedLag: 3n });
    const signature = b.sendTransaction(tx(5));
    expect(b.sentTransactions).toHaveLength(1);
    expect(b.signatureStatus(signature)).toEqual({ slot: 50n, confirmations: 0, err: null, confirmationStatus: 'processed' });
    b.advanceSlot();
    expect(b.signatureStatus(signature)?.confirmationStatus).toBe('confirmed');
    b.advanceSlot(2);
    expect(b.signatureStatus(signature)).toEqual({ slot: 50n, confirmations: null, err: null, confirmationStatus: 'finalized' });
    expect(b.signatureStatus(address(1))).toBeNull();
  });

  it('throws the configured RpcError instead of accepting', () => {
    const b = new MemoryBackend();
    b.sendTransactionError = rpcError(-32002, 'Transaction simulation failed');
    expect(() => b.sendTransaction(tx(1))).toThrow(expect.objectContaining({ code: 'TP_ERR_NODE_RPC_ERROR' }));
    expect(b.sentTransactions).toHaveLength(0);
    expect(() => new MemoryBackend().sendTransaction(new Uint8Array(10))).toThrow(expect.objectContaining({ code: 'TP_ERR_NODE_RPC_ERROR' }));
  });

  it('lands a bundle in the next slot', () => {
    const b = new MemoryBackend({ slot: 7n });
    const id = b.sendBundle([tx(1), tx(2)]);
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(b.bundleStatus(id)).toMatchObject({ slot: 8n, transactions: expect.any(Array) });
    expect(() => b.sendBundle([])).toThrow(expect.objectContaining({ code: 'TP_ERR_NODE_RPC_ERROR' }));
    expect(b.tipAccounts()).toHaveLength(8);
  });
});
