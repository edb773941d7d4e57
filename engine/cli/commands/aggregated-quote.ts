import * as grpc from '@grpc/grpc-js';

import { setBearerToken } from '../../auth/index.js';
import { parseCommandLine } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { loadTidepoolProto } from '../../proto.js';
import type { Command } from '../command.js';

const HELP = `Usage:
  tidepool aggregated-quote --input MINT --output MINT --amount N [--slippage-bps N]
                            [--addr HOST:PORT] [--breakdown] [--timeout-ms N]
  tidepool aggregated-quote --health [--addr HOST:PORT]

A client of the quote aggregator's gRPC API (tidepool.v1.QuoteAggregatorService, default
127.0.0.1:50051). Prints the answer as JSON (proto3 JSON names; u64 amounts as decimal strings):
  GetAggregatedQuote              (default) the merged quote: both sources, best, confidence, decision
  GetConfidenceBreakdown          --breakdown: every confidence factor's input, score and weight
  Health                          --health: the aggregator's and its upstreams' status
A gRPC error prints {"error":{"code","message"}} and exits 1.

  --addr HOST:PORT     the aggregator (default 127.0.0.1:50051)
  --input MINT         the mint sold (base58)
  --output MINT        the mint bought (base58)
  --amount N           input atoms, an unsigned 64-bit integer
  --slippage-bps N     slippage tolerance, 0 to 10000 (default 50)
  --timeout-ms N       deadline of the call (default 2000)

TIDEPOOL_JWT_TOKEN, when set, is sent as \`authorization: Bearer\` (an aggregator with auth on).
`;

const OPTIONS = {
  addr: { type: 'string', description: 'aggregator address' },
  input: { type: 'string', description: 'input mint' },
  output: { type: 'string', description: 'output mint' },
  amount: { type: 'string', description: 'amount' },
  'slippage-bps': { type: 'string', description: 'slippage' },
  'timeout-ms': { type: 'string', description: 'deadline' },
  breakdown: { type: 'boolean', description: 'confidence breakdown' },
  health: { type: 'boolean', description: 'health' },
} as const;

function required(options: Record<string, unknown>, name: string): string {
  const v = options[name];
  if (typeof v !== 'string' || v === '') throw new TpError(ErrorCode.Usage, `--${name} is required\n\n${HELP}`);
  return v;
}

function integer(options: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) > max) throw new TpError(ErrorCode.Usage, `--${name} must be an integer from 0 to ${max}, got ${JSON.stringify(v)}`);
  return Number(v);
}

type Unary = (request: object, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, response: unknown) => void) => void;

export const aggregatedQuoteCommand: Command = {
  name: 'aggregated-quote',
  summary: "ask the quote aggregator (gRPC) for a merged quote, its confidence breakdown, or its health",
  help: HELP,
  async run(argv, io) {
    const { options } = parseCommandLine(argv, {}, OPTIONS);
    const addr = typeof options.addr === 'string' ? options.addr : '127.0.0.1:50051';
    const timeoutMs = integer(options, 'timeout-ms', 2000, 600_000);
    let method: string;
    let request: object;
    if (options.health === true) {
      method = 'Health';
      request = {};
    } else {
      const amount = required(options, 'amount');
      if (!/^\d{1,20}$/.test(amount) || BigInt(amount) > 0xffff_ffff_ffff_ffffn) {
        throw new TpError(ErrorCode.Usage, `--amount must be an unsigned 64-bit integer, got ${JSON.stringify(amount)}`);
      }
      const quote = { inputMint: required(options, 'input'), outputMint: required(options, 'output'), amount, slippageBps: integer(options, 'slippage-bps', 50, 10_000) };
      method = options.breakdown === true ? 'GetConfidenceBreakdown' : 'GetAggregatedQuote';
      request = options.breakdown === true ? { quote } : quote;
    }
    const Client = loadTidepoolProto().QuoteAggregatorService;
    const client = new Client(addr, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Unary>;
    try {
      const response = await new Promise<unknown>((resolve, reject) =>
        client[method]!(request, setBearerToken(new grpc.Metadata(), io.env.TIDEPOOL_JWT_TOKEN), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res))),
      );
      // Drop the loader's virtual oneof names (`_providerUptime` for proto3 optional fields).
      io.stdout.write(`${JSON.stringify(response, (key, value: unknown) => (key.startsWith('_') ? undefined : value), 2)}\n`);
      return 0;
    } catch (err) {
      const e = err as grpc.ServiceError;
      io.stdout.write(`${JSON.stringify({ error: { code: grpc.status[e.code] ?? String(e.code), message: e.details ?? e.message } })}\n`);
      return 1;
    } finally {
      client.close();
    }
  },
};
