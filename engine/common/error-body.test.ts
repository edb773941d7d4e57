import { describe, expect, it } from 'vitest';

import { errorBody } from './error-body.js';

describe('errorBody', () => {
  it('writes {"error":{"code","message"}}, escaping the message', () => {
    expect(JSON.parse(errorBody('TP_ERR_BAD_PARAMETER', 'parameter "amount" is missing'))).toEqual({
      error: { code: 'TP_ERR_BAD_PARAMETER', message: 'parameter "amount" is missing' },
    });
  });
});
