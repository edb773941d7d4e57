import { base58 } from '../chain/index.js';
import { keypairFromSeed, type Keypair } from '../chain/index.js';
import type { AccountRecord } from './chain-backend.js';
import { LAMPORTS_PER_SOL, RENT_EPOCH_EXEMPT, SYSTEM_PROGRAM_ID, VOTE_PROGRAM_ID, rentExemptMinimum } from './known-accounts.js';
import type { SimToken } from './market-view.js';
import { associatedTokenAddress } from './associated-token.js';
import { tokenAccountRecord } from './pool-genesis.js';
import { seededBytes32 } from './prng.js';

/**
 * Who acts on the simulated chain, all with seeded keys and funded at genesis: traders (SOL and an
 * associated token account per mint), validators (an identity paying for its votes and a vote
 * account), and plain wallets that receive transfers.
 */

export interface Trader {
  keypair: Keypair;
  /** Associated token account per mint. */
  tokenAccounts: ReadonlyMap<string, string>;
}

export interface Validator {
  identity: Keypair;
  voteAccount: string;
}

export interface Actors {
  traders: Trader[];
  validators: Validator[];
  /** Wallets that receive SOL transfers. */
  wallets: string[];
}

export const TRADER_COUNT = 24;
export const VALIDATOR_COUNT = 16;
export const WALLET_COUNT = 64;

export const TRADER_LAMPORTS = 1_000n * LAMPORTS_PER_SOL;
export const VALIDATOR_LAMPORTS = 10_000n * LAMPORTS_PER_SOL;
export const WALLET_LAMPORTS = 1n * LAMPORTS_PER_SOL;
/** What each trader holds of every token at genesis, in USD. */
export const TRADER_TOKEN_USD = 2_000_000;
/** A vote account's size (VoteState versions 1.14.11 and later). */
const VOTE_ACCOUNT_SIZE = 3762;

/** The keypair for `label`: the same seed and label always give the same key. */
export function seededKeypair(seed: number, label: string): Keypair {
  return keypairFromSeed(seededBytes32(seed, label));
}

export function createActors(seed: number, tokens: readonly SimToken[]): Actors {
  const traders: Trader[] = [];
  for (let i = 0; i < TRADER_COUNT; i++) {
    const keypair = seededKeypair(seed, `trader:${i}`);
    const tokenAccounts = new Map<string, string>();
    for (const token of tokens) tokenAccounts.set(token.mint, associatedTokenAddress(keypair.address, token.mint, token.programId));
    traders.push({ keypair, tokenAccounts });
  }
  const validators: Validator[] = [];
  for (let i = 0; i < VALIDATOR_COUNT; i++) {
    validators.push({
      identity: seededKeypair(seed, `validator:${i}`),
      voteAccount: base58.encode(seededBytes32(seed, `vote-account:${i}`)),
    });
  }
  const wallets: string[] = [];
  for (let i = 0; i < WALLET_COUNT; i++) wallets.push(base58.encode(seededBytes32(seed, `wallet:${i}`)));
  return { traders, validators, wallets };
}

export function systemAccount(lamports: bigint): AccountRecord {
  return { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false, rentEpoch: RENT_EPOCH_EXEMPT };
}

/** Writes the actors' genesis accounts into `accounts`. */
export function addActorAccounts(actors: Actors, tokens: readonly SimToken[], accounts: Map<string, AccountRecord>): void {
  for (const trader of actors.traders) {
    accounts.set(trader.keypair.address, systemAccount(TRADER_LAMPORTS));
    for (const token of tokens) {
      const amount = BigInt(Math.floor((TRADER_TOKEN_USD / token.referencePriceUsd) * 10 ** token.decimals));
      accounts.set(trader.tokenAccounts.get(token.mint)!, tokenAccountRecord(token, trader.keypair.address, amount, true));
    }
  }
  for (const validator of actors.validators) {
    accounts.set(validator.identity.address, systemAccount(VALIDATOR_LAMPORTS));
    accounts.set(validator.voteAccount, {
      lamports: rentExemptMinimum(VOTE_ACCOUNT_SIZE),
      owner: VOTE_PROGRAM_ID,
      data: new Uint8Array(VOTE_ACCOUNT_SIZE),
      executable: false,
      rentEpoch: RENT_EPOCH_EXEMPT,
    });
  }
  for (const wallet of actors.wallets) accounts.set(wallet, systemAccount(WALLET_LAMPORTS));
}
