import { base58 } from '../../chain/index.js';
import { parseCommandLine, type CommandOption } from '../../config/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { ChainClient, isRpcFailure } from '../../rpc/index.js';
import { toJson, type CliIo } from '../command.js';

/**
 * `tidepool sim faucet`: funds a wallet on a running simulator through its JSON-RPC, SOL with
 * requestAirdrop and tokens with the simulator-only simRequestTokens (engine/sim/faucet.ts), then
 * waits for the grant to be confirmed and prints it with the wallet's new balance.
 */

export const SIM_FAUCET_HELP = `Usage: tidepool sim faucet --wallet PUBKEY (--sol | --mint MINT|SYMBOL) --amount ATOMS [options]

Funds a wallet on a running 'tidepool sim' with a real transaction, signed by the simulator's
faucet (a genesis account holding 1,000,000 SOL):
  --sol           lamports through requestAirdrop (as on a test validator; at most the
                  simulator's sim.faucetCapSol per request, default 1,000 SOL)
  --mint M        atoms of the simulator's token M (mint address or symbol, e.g. USDC) through
                  simRequestTokens, which exists on the simulator only: the wallet's associated
                  token account is created when missing and the mint authority the simulator
                  holds mints into it (wrapped SOL: lamports wrapped with SyncNative). SPL Token
                  mints, at most $1,000,000 worth per request at the reference price.
Waits until the grant is confirmed and prints JSON:
  {signature, wallet, mint, tokenAccount?, amount, slot, balance} (amounts are decimal strings)

  --wallet PUBKEY   the wallet to fund (base58)
  --amount ATOMS    lamports for --sol, token atoms for --mint
  --rpc-url URL     the simulator's JSON-RPC (default http://127.0.0.1:8899)
  --timeout-ms N    how long to wait for confirmation (default 30000)
  --no-wait         print the signature once sent, without waiting
`;

const OPTIONS: Record<string, CommandOption> = {
  wallet: { type: 'string', description: 'wallet to fund' },
  sol: { type: 'boolean', description: 'SOL through requestAirdrop' },
  mint: { type: 'string', description: 'mint address or symbol' },
  amount: { type: 'string', description: 'atoms' },
  'rpc-url': { type: 'string', description: 'simulator JSON-RPC URL' },
  'timeout-ms': { type: 'string', description: 'confirmation timeout' },
  'no-wait': { type: 'boolean', description: 'do not wait for confirmation' },
  help: { type: 'boolean', description: 'help' },
};

export const DEFAULT_SIM_RPC_URL = 'http://127.0.0.1:8899';
const U64_MAX = (1n << 64n) - 1n;
/** Between two getSignatureStatuses while waiting: about a slot of the simulator. */
const POLL_MS = 200;

function usage(message: string): TpError {
  return new TpError(ErrorCode.Usage, `${message}\n\n${SIM_FAUCET_HELP}`);
}

export async function runSimFaucet(argv: string[], io: CliIo): Promise<number> {
  const { options, positionals } = parseCommandLine(argv, {}, OPTIONS);
  if (options.help === true) {
    io.stdout.write(SIM_FAUCET_HELP);
    return 0;
  }
  if (positionals.length > 0) throw usage(`unexpected argument ${positionals[0]}`);
  const wallet = typeof options.wallet === 'string' ? options.wallet : '';
  if (wallet === '') throw usage('--wallet is required');
  try {
    base58.decodePubkey(wallet);
  } catch {
    throw usage(`--wallet ${JSON.stringify(wallet)} is not a base58 public key`);
  }
  const sol = options.sol === true;
  const mint = typeof options.mint === 'string' && options.mint !== '' ? options.mint : undefined;
  if (sol === (mint !== undefined)) throw usage('give exactly one of --sol and --mint');
  const amountText = typeof options.amount === 'string' ? options.amount : '';
  if (!/^\d{1,20}$/.test(amountText) || BigInt(amountText) > U64_MAX) throw usage(`--amount must be atoms (an unsigned 64-bit integer), got ${JSON.stringify(amountText)}`);
  const amount = BigInt(amountText);
  const timeoutText = typeof options['timeout-ms'] === 'string' ? options['timeout-ms'] : '30000';
  if (!/^\d{1,9}$/.test(timeoutText)) throw usage(`--timeout-ms must be a number of milliseconds, got ${JSON.stringify(timeoutText)}`);
  const url = typeof options['rpc-url'] === 'string' ? options['rpc-url'] : DEFAULT_SIM_RPC_URL;

  const client = new ChainClient({ url, commitment: 'confirmed' });
  try {
    let grant: { signature: string; mint: string; tokenAccount?: string };
    try {
      if (sol) {
        // JSON numbers are doubles: past 2^53 no faucet grants anyway (the node would see another number).
        if (amount > BigInt(Number.MAX_SAFE_INTEGER)) throw usage(`--amount ${amount} lamports is more than any faucet grants`);
        const { result } = await client.call('requestAirdrop', [wallet, Number(amount), { commitment: 'confirmed' }]);
        grant = { signature: String(result), mint: 'SOL' };
      } else {
        const { result } = await client.call('simRequestTokens', [wallet, mint, amount.toString(), { commitment: 'confirmed' }]);
        const r = result as { signature: string; mint: string; tokenAccount: string };
        grant = { signature: r.signature, mint: r.mint, tokenAccount: r.tokenAccount };
      }
    } catch (err) {
      throw refusal(err, url, sol ? 'requestAirdrop' : 'simRequestTokens');
    }
    const base = { signature: grant.signature, wallet, mint: grant.mint, ...(grant.tokenAccount !== undefined ? { tokenAccount: grant.tokenAccount } : {}), amount };
    if (options['no-wait'] === true) {
      io.stdout.write(`${toJson(base)}\n`);
      return 0;
    }
    const slot = await waitConfirmed(client, grant.signature, Number(timeoutText));
    const balance = grant.tokenAccount === undefined ? await client.getBalance(wallet) : await tokenBalance(client, grant.tokenAccount);
    io.stdout.write(`${toJson({ ...base, slot, balance })}\n`);
    return 0;
  } finally {
    await client.close();
  }
}

/** The node's refusal as a TpError naming the method and the node's words. */
function refusal(err: unknown, url: string, method: string): unknown {
  if (!isRpcFailure(err)) return err;
  if (err.context.kind === 'rpc') {
    const data = err.context.data;
    const detail = typeof data === 'string' ? ` (${data})` : '';
    const hint = err.context.rpcCode === -32601 ? `: ${url} is not a tidepool simulator (the token faucet exists on the simulator only)` : '';
    return new TpError(ErrorCode.TransferFailed, `${method} refused by ${url}: ${err.message}${detail}${hint}`, { context: { rpcCode: err.context.rpcCode, url } });
  }
  return new TpError(ErrorCode.Unavailable, `${method}: no answer from the simulator at ${url} (--rpc-url): ${err.message}`, { context: { url } });
}

/** Polls the signature's status until it is confirmed (its slot) or failed; TpError after `timeoutMs`. */
async function waitConfirmed(client: ChainClient, signature: string, timeoutMs: number): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [status] = await client.getSignatureStatuses([signature]);
    if (status !== null && status !== undefined) {
      if (status.err !== null) throw new TpError(ErrorCode.TransferFailed, `the faucet's transaction ${signature} failed: ${JSON.stringify(status.err)}`, { context: { signature } });
      if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') return status.slot;
    }
    if (Date.now() > deadline) throw new TpError(ErrorCode.TransferFailed, `the faucet's transaction ${signature} was not confirmed within ${timeoutMs} ms`, { context: { signature } });
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function tokenBalance(client: ChainClient, account: string): Promise<bigint> {
  const { result } = await client.call('getTokenAccountBalance', [account, { commitment: client.commitment }]);
  return BigInt((result as { value: { amount: string } }).value.amount);
}
