import {
  associatedTokenAddress,
  buildTransaction,
  createAssociatedTokenIdempotentInstruction,
  mintToCheckedInstruction,
  syncNativeInstruction,
  systemTransferInstruction,
  type InstructionInput,
  type Keypair,
} from '../chain/index.js';
import { seededKeypair } from './actors.js';
import { rpcError, type RpcError, RpcErrorCode, type BlockhashInfo, type Commitment } from './chain-backend.js';
import { LAMPORTS_PER_SOL, TOKEN_PROGRAM_ID, WSOL_MINT } from './known-accounts.js';
import { mintAuthorityKeypair } from './market.js';
import type { SimToken } from './market-view.js';

/**
 * The simulator's faucets: how a user funds a wallet of their own on the simulated chain.
 *
 * The faucet is a genesis account (seeded key `faucet`, FAUCET_LAMPORTS), like the faucet keypair
 * a test validator funds at genesis. Nothing is credited out of band: every grant is an ordinary
 * signed transaction sent through the chain's sendTransaction, so it lands in the next slot, is in
 * the entry stream, and getSignatureStatuses and getTransaction know it.
 *
 * - SOL (`requestAirdrop`): a System Transfer from the faucet, built and sent as agave's
 *   request_airdrop sends the faucet's transaction: signed with the latest blockhash at the
 *   request's commitment (or the request's `recentBlockhash`), no preflight, its signature
 *   returned. A request over the per-request cap is refused as a node whose faucet refuses:
 *   -32603 `Internal error` (with the faucet's reason, `request too large; req: ◎X, cap: ◎Y`, as
 *   the error's data).
 * - Tokens (`simRequestTokens`, simulator only): the faucet pays a CreateIdempotent of the owner's
 *   associated token account and the mint's authority, which the simulator holds
 *   (market.ts mintAuthorityKeypair), signs a MintToChecked of the amount into it. Wrapped SOL has
 *   no mint authority: the faucet transfers the lamports into the account and SyncNative wraps
 *   them. Sent with preflight, so a request that cannot land is refused with the node's -32002.
 *   SPL Token mints only (the associated account program of the simulator does not create
 *   Token-2022 accounts); at most TOKEN_FAUCET_CAP_USD worth per request at the reference price.
 */

/** The faucet's balance at genesis: a test validator's default (`--faucet-sol 1000000`). */
export const FAUCET_LAMPORTS = 1_000_000n * LAMPORTS_PER_SOL;
/** Default per-request cap of requestAirdrop (`sim.faucetCapSol`). */
export const DEFAULT_FAUCET_CAP_SOL = 1_000;
/** Per-request cap of the token faucet, in USD at the token's reference price. */
export const TOKEN_FAUCET_CAP_USD = 1_000_000;

/** The faucet's keypair for a chain seeded `seed`. */
export function faucetKeypair(seed: number): Keypair {
  return seededKeypair(seed, 'faucet');
}

/** What the faucet needs of the chain. */
export interface FaucetChain {
  latestBlockhash(commitment?: Commitment): BlockhashInfo;
  sendTransaction(tx: Uint8Array, options?: { skipPreflight?: boolean }): string;
  tokens(): readonly SimToken[];
}

export interface AirdropOptions {
  /** The bank whose blockhash signs the transfer. Default finalized, as the node's default. */
  commitment?: Commitment;
  /** base58 blockhash to sign with instead. */
  recentBlockhash?: string;
}

export interface TokenGrant {
  signature: string;
  /** The owner's associated token account, credited. */
  tokenAccount: string;
  mint: string;
  symbol: string;
  amount: bigint;
}

const U64_MAX = (1n << 64n) - 1n;

export class SimFaucet {
  readonly keypair: Keypair;
  readonly capLamports: bigint;

  constructor(
    private readonly chain: FaucetChain,
    private readonly seed: number,
    capSol: number = DEFAULT_FAUCET_CAP_SOL,
  ) {
    this.keypair = faucetKeypair(seed);
    this.capLamports = BigInt(capSol) * LAMPORTS_PER_SOL;
  }

  get address(): string {
    return this.keypair.address;
  }

  /** Sends `lamports` from the faucet to `to`; returns the transaction's signature. Throws RpcError. */
  airdrop(to: string, lamports: bigint, options: AirdropOptions = {}): string {
    if (lamports > this.capLamports) {
      throw rpcError(RpcErrorCode.Internal, 'Internal error', `request too large; req: ◎${solText(lamports)}, cap: ◎${solText(this.capLamports)}`);
    }
    const blockhash = options.recentBlockhash ?? this.chain.latestBlockhash(options.commitment ?? 'finalized').blockhash;
    const tx = buildTransaction({
      payer: this.keypair,
      instructions: [systemTransferInstruction(this.keypair.address, to, lamports)],
      recentBlockhash: blockhash,
    });
    return this.chain.sendTransaction(tx, { skipPreflight: true });
  }

  /**
   * Credits `amount` atoms of `token` (a mint address or a symbol, any case) to `owner`'s
   * associated token account, creating it when missing. Throws RpcError: -32602 for a token the
   * faucet cannot grant or an amount out of bounds, -32002 when preflight fails.
   */
  grantTokens(owner: string, token: string, amount: bigint, commitment: Commitment = 'finalized'): TokenGrant {
    const found = this.findToken(token);
    if (found.programId !== undefined && found.programId !== TOKEN_PROGRAM_ID) {
      throw invalid(`${found.symbol} (${found.mint}) is a Token-2022 mint: the token faucet creates and credits SPL Token accounts only`);
    }
    if (amount < 1n || amount > U64_MAX) throw invalid(`amount must be from 1 to ${U64_MAX} atoms, got ${amount}`);
    const usd = (Number(amount) / 10 ** found.decimals) * found.referencePriceUsd;
    if (usd > TOKEN_FAUCET_CAP_USD) {
      throw invalid(`request too large: ${amount} atoms of ${found.symbol} are worth $${Math.round(usd)} at the reference price; the cap is $${TOKEN_FAUCET_CAP_USD} per request`);
    }
    const tokenAccount = associatedTokenAddress(owner, found.mint);
    const instructions: InstructionInput[] = [createAssociatedTokenIdempotentInstruction({ payer: this.keypair.address, owner, mint: found.mint })];
    const signers: Keypair[] = [];
    if (found.mint === WSOL_MINT) {
      instructions.push(systemTransferInstruction(this.keypair.address, tokenAccount, amount), syncNativeInstruction(tokenAccount));
    } else {
      const authority = mintAuthorityKeypair(this.seed, found.mint);
      instructions.push(mintToCheckedInstruction(found.mint, tokenAccount, authority.address, amount, found.decimals));
      signers.push(authority);
    }
    const tx = buildTransaction({ payer: this.keypair, signers, instructions, recentBlockhash: this.chain.latestBlockhash(commitment).blockhash });
    const signature = this.chain.sendTransaction(tx);
    return { signature, tokenAccount, mint: found.mint, symbol: found.symbol, amount };
  }

  private findToken(token: string): SimToken {
    const tokens = this.chain.tokens();
    const upper = token.toUpperCase();
    const found = tokens.find((t) => t.mint === token) ?? tokens.find((t) => t.symbol.toUpperCase() === upper);
    if (found === undefined) throw invalid(`no token ${JSON.stringify(token)} on this simulator; its tokens: ${tokens.map((t) => `${t.symbol} ${t.mint}`).join(', ')}`);
    return found;
  }
}

function invalid(message: string): RpcError {
  return rpcError(RpcErrorCode.InvalidParams, message);
}

/** Lamports as SOL, as the faucet's message prints them (`lamports_to_sol`: no trailing zeros). */
function solText(lamports: bigint): string {
  const whole = lamports / LAMPORTS_PER_SOL;
  const frac = (lamports % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
}
