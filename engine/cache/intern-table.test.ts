import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { InternTable, NO_ID } from './intern-table.js';

describe('InternTable', () => {
  it('gives one id per distinct string and counts references', () => {
    const t = new InternTable(4);
    const a = t.acquire('A');
    expect(t.acquire('A')).toBe(a);
    expect(t.refCount(a)).toBe(2);
    expect(t.acquire('B')).not.toBe(a);
    expect(t.idOf('A')).toBe(a);
    expect(t.idOf('C')).toBe(NO_ID);
    expect(t.stringOf(a)).toBe('A');
    expect(t.size).toBe(2);
  });

  it('forgets a string only when its last reference is released, and reuses the id', () => {
    const t = new InternTable(2);
    const a = t.acquire('A');
    t.acquire('A');
    expect(t.release(a)).toBe(false);
    expect(t.idOf('A')).toBe(a);
    expect(t.release(a)).toBe(true);
    expect(t.idOf('A')).toBe(NO_ID);
    expect(t.stringOf(a)).toBeUndefined();
    expect(t.acquire('Z')).toBe(a);
  });

  it('refuses a new string when full', () => {
    const t = new InternTable(1);
    t.acquire('A');
    expect(t.acquire('B')).toBe(NO_ID);
    expect(t.acquire('A')).not.toBe(NO_ID);
    expect(t.values()).toEqual(['A']);
  });

  it('refuses a capacity that is not a positive integer, naming it', () => {
    expect(() => new InternTable(0)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'capacity', value: 0 } }));
  });
});
