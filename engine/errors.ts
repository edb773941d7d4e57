/**
 * One error class for the whole engine, with a stable code per failure (`TP_ERR_...`).
 * Codes are part of the public contract: logs, metrics labels and API error bodies carry them.
 * The mapping of codes to HTTP and gRPC statuses lives with the servers that need it.
 */
export const ErrorCode = {
  // configuration
  ConfigInvalid: 'TP_ERR_CONFIG_INVALID',
  ConfigFile: 'TP_ERR_CONFIG_FILE',
  // wire formats
  EntryMalformed: 'TP_ERR_ENTRY_MALFORMED',
  Base58Invalid: 'TP_ERR_BASE58_INVALID',
  // pool accounts
  UnknownOwner: 'TP_ERR_UNKNOWN_OWNER',
  AccountSize: 'TP_ERR_ACCOUNT_SIZE',
  AccountDiscriminator: 'TP_ERR_ACCOUNT_DISCRIMINATOR',
  AccountInvalid: 'TP_ERR_ACCOUNT_INVALID',
  // swaps
  UnknownMint: 'TP_ERR_UNKNOWN_MINT',
  InvalidAmount: 'TP_ERR_INVALID_AMOUNT',
  // command line
  Usage: 'TP_ERR_USAGE',
  Io: 'TP_ERR_IO',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface TpErrorOptions {
  cause?: unknown;
  context?: Record<string, unknown>;
}

export class TpError extends Error {
  override readonly name = 'TpError';
  readonly code: ErrorCode;
  readonly context: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: TpErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.context = options.context ?? {};
  }

  toJSON(): { code: ErrorCode; message: string; context: Record<string, unknown> } {
    return { code: this.code, message: this.message, context: this.context };
  }
}

export function isTpError(err: unknown, code?: ErrorCode): err is TpError {
  return err instanceof TpError && (code === undefined || err.code === code);
}
