import { isTpError } from '../../errors.js';

/** The TpError code `fn` throws, 'no error', or 'not a TpError'. */
export function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return isTpError(err) ? err.code : 'not a TpError';
  }
  return 'no error';
}
