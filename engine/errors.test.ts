import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError, TpError } from './errors.js';

describe('TpError', () => {
  it('carries its code, message, cause and context, and serialises without the stack', () => {
    const cause = new Error('socket closed');
    const err = new TpError(ErrorCode.BadParameter, 'amount: not a number', { cause, context: { parameter: 'amount', value: 'x' } });
    expect(err).toBeInstanceOf(Error);
    expect(err.cause).toBe(cause);
    expect(err.context.parameter).toBe('amount');
    expect(JSON.parse(JSON.stringify(err))).toEqual({ code: 'TP_ERR_BAD_PARAMETER', message: 'amount: not a number', context: { parameter: 'amount', value: 'x' } });
  });

  it('types the context of the codes that fix its shape (checked by tsc in npm run check)', () => {
    // @ts-expect-error BadParameter's context names the parameter
    const missing = new TpError(ErrorCode.BadParameter, 'bad', { context: { field: 'amount' } });
    // @ts-expect-error MessageInvalid's context names the path
    const wrongType = new TpError(ErrorCode.MessageInvalid, 'bad', { context: { path: 3 } });
    // @ts-expect-error Io's context is one of its shapes, no free-form fields
    const free = new TpError(ErrorCode.Io, 'cannot read', { context: { file: '/tmp/x', anything: 1 } });
    const io = new TpError(ErrorCode.Io, 'cannot read', { context: { path: '/tmp/x' } });
    expect([missing.code, wrongType.code, free.code, 'path' in io.context && io.context.path]).toEqual([ErrorCode.BadParameter, ErrorCode.MessageInvalid, ErrorCode.Io, '/tmp/x']);
  });

  it('narrows by code', () => {
    const err: unknown = new TpError(ErrorCode.UnknownMint, 'unknown token M', { context: { mint: 'M' } });
    expect(isTpError(err, ErrorCode.UnknownMint) && err.context.mint).toBe('M');
    expect(isTpError(err, ErrorCode.NotFound)).toBe(false);
    expect(isTpError(new Error('plain'))).toBe(false);
  });
});
