import { ErrorCode, TpError } from '../errors.js';

/**
 * A token that does not verify; the message says why (never the token itself). In a file of its
 * own so that a server with auth off (engine/quote-http) can tell it apart without loading the
 * verifier and its JWT library.
 */
export class AuthError extends TpError<typeof ErrorCode.Unauthenticated> {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.Unauthenticated, message, options);
  }
}
