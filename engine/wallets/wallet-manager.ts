import { generateKeypair, keypairFromSeed, keypairSeed, type Keypair } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { ChainClient, TokenAccountInfo } from '../rpc/index.js';
import type { SqlClient, KeySpace } from '../state/index.js';

import { decryptSeed, encryptSeed, type WalletPassphrase } from './key-encryption.js';
import { readKeypairFile } from './keypair-file.js';
import { NATIVE_SOL, WalletRepository, type Balances, type WalletRecord, type WalletTier } from './wallet-repository.js';

/**
 * Wallet management: create and import (keys sealed before they reach the database), expected
 * balances, balance sync from the chain, and opening a key to sign. Keys are opened only in
 * memory, one wallet at a time, and never logged or returned.
 */

export interface WalletManagerOptions {
  db: SqlClient;
  /** Where `wallet:balance:` keys go on sync; none = database only. */
  keys?: KeySpace;
  /** Needed by sync and signing paths. */
  chain?: ChainClient;
  /** Needed to create, import and sign. */
  passphrase?: WalletPassphrase;
  logger?: Logger;
}

export interface WalletSync {
  wallet: WalletRecord;
  /** SOL (lamports) and every mint held, summed over the wallet's token accounts. */
  balances: Balances;
  /** The token accounts read, for transfers that must name one. */
  tokenAccounts: TokenAccountInfo[];
  at: Date;
}

export class WalletManager {
  readonly repo: WalletRepository;

  constructor(private readonly options: WalletManagerOptions) {
    this.repo = new WalletRepository(options.db);
  }

  private needPassphrase(): WalletPassphrase {
    if (this.options.passphrase === undefined) {
      throw new TpError(ErrorCode.WalletPassphrase, 'no wallet passphrase: set TIDEPOOL_WALLET_PASSPHRASE or give a key file (--key-file)');
    }
    return this.options.passphrase;
  }

  private needChain(): ChainClient {
    if (this.options.chain === undefined) throw new TpError(ErrorCode.ConfigInvalid, 'no RPC endpoint configured for wallet operations');
    return this.options.chain;
  }

  /** Creates `count` wallets of `tier` with fresh keypairs. */
  async create(tier: WalletTier, count: number, expected?: Balances): Promise<WalletRecord[]> {
    const passphrase = this.needPassphrase();
    passphrase.checkStrength();
    const out: WalletRecord[] = [];
    for (let i = 0; i < count; i++) out.push(await this.store(tier, generateKeypair(), passphrase, expected));
    return out;
  }

  /** Imports a Solana CLI keypair file as a wallet of `tier`. */
  async importKeypairFile(tier: WalletTier, path: string, expected?: Balances): Promise<WalletRecord> {
    const passphrase = this.needPassphrase();
    passphrase.checkStrength();
    const keypair = readKeypairFile(path);
    if ((await this.repo.byAddress(keypair.address)) !== null) {
      throw new TpError(ErrorCode.WalletInvalid, `wallet ${keypair.address} is already registered`, { context: { address: keypair.address } });
    }
    return this.store(tier, keypair, passphrase, expected);
  }

  private async store(tier: WalletTier, keypair: Keypair, passphrase: WalletPassphrase, expected?: Balances): Promise<WalletRecord> {
    const seed = keypairSeed(keypair);
    try {
      const sealed = await encryptSeed(seed, keypair.address, passphrase);
      return await this.repo.insert({ tier, address: keypair.address, encryptedPrivateKey: sealed, ...(expected === undefined ? {} : { expectedBalance: expected }) });
    } finally {
      seed.fill(0);
    }
  }

  /** Opens a wallet's key to sign with. TP_ERR_WALLET_PASSPHRASE when it does not open. */
  async signer(wallet: WalletRecord): Promise<Keypair> {
    const passphrase = this.needPassphrase();
    const seed = await decryptSeed(await this.repo.sealedKey(wallet.id), wallet.address, passphrase);
    try {
      const keypair = keypairFromSeed(seed);
      if (keypair.address !== wallet.address) {
        throw new TpError(ErrorCode.WalletKeyFormat, `the stored key of wallet ${wallet.address} derives ${keypair.address}`);
      }
      return keypair;
    } finally {
      seed.fill(0);
    }
  }

  /** Checks that every wallet's key opens with the passphrase (no key leaves this call). */
  async verifyKeys(wallets?: readonly WalletRecord[]): Promise<void> {
    for (const w of wallets ?? (await this.repo.list())) await this.signer(w);
  }

  /**
   * Reads SOL (getBalance) and SPL Token balances (getTokenAccountsByOwner) of each wallet from
   * the chain into `actual_balance` and `last_sync`, and writes `wallet:balance:{address}:{token}`
   * for every token it holds or is expected to hold. Default: every enabled wallet.
   */
  async sync(wallets?: readonly WalletRecord[]): Promise<WalletSync[]> {
    const chain = this.needChain();
    const list = wallets ?? (await this.repo.list({ enabled: true }));
    const out: WalletSync[] = [];
    for (const wallet of list) {
      const [lamports, tokenAccounts] = await Promise.all([chain.getBalance(wallet.address), chain.getTokenAccountsByOwner(wallet.address)]);
      const balances: Balances = new Map([[NATIVE_SOL, lamports]]);
      for (const a of tokenAccounts) balances.set(a.mint, (balances.get(a.mint) ?? 0n) + a.amount);
      const at = new Date();
      await this.repo.recordSync(wallet.id, balances, at);
      const synced: WalletRecord = { ...wallet, actualBalance: balances, lastSync: at };
      if (this.options.keys !== undefined) {
        const tokens = new Set([...balances.keys(), ...wallet.expectedBalance.keys()]);
        await this.options.keys.setWalletBalances(
          [...tokens].map((token) => ({
            address: wallet.address,
            token,
            value: {
              expected: wallet.expectedBalance.get(token)?.toString() ?? null,
              actual: (balances.get(token) ?? 0n).toString(),
              lastSync: at.getTime(),
            },
          })),
        );
      }
      out.push({ wallet: synced, balances, tokenAccounts, at });
    }
    return out;
  }
}
