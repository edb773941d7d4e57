/**
 * engine/wallets: the wallet fleet of spec 03. Keys sealed at rest (AES-256-GCM under a
 * scrypt key), Solana CLI keypair import, balance sync from the chain, and worker rebalancing
 * with real signed transfers, idempotent across crashes.
 */
export { WalletPassphrase, encryptSeed, decryptSeed, KEY_FORMAT_VERSION, MIN_PASSPHRASE_LENGTH } from './key-encryption.js';
export { readKeypairFile, keypairFromBase58, keypairFromSecretKey, secretKeyBytes, SECRET_KEY_BYTES } from './keypair-file.js';
export {
  NATIVE_SOL,
  WALLET_TIERS,
  WalletRepository,
  WalletTier,
  balancesFromJson,
  balancesToJson,
  parseTier,
  type Balances,
  type TransferReason,
  type TransferRecord,
  type TransferStatus,
  type WalletRecord,
} from './wallet-repository.js';
export { WalletManager, type WalletManagerOptions, type WalletSync } from './wallet-manager.js';
export {
  Rebalancer,
  planRebalance,
  type PlannedTransfer,
  type RebalancePlan,
  type RebalanceResult,
  type RebalancerOptions,
  type SkippedTransfer,
  type TransferOutcome,
} from './rebalancer.js';
export { firstSignatureText } from './signature.js';
export { WALLET_METRIC_NAMES, WalletMetrics } from './wallet-metrics.js';
export { WalletService, type WalletServiceOptions, type WalletServiceStatus } from './wallet-service.js';
