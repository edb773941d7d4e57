import { setting, type ConfigValues } from '../config/index.js';
import { bool, duration, int, num, port, str } from '../config/index.js';

/**
 * Settings of `tidepool sim`, the local chain simulator. Everything it produces follows from
 * `seed` and these settings: two runs with the same ones produce the same slots, transactions and
 * states. Ports are those of docs/architecture.md; 0 picks a free port (tests).
 */
export const simSchema = {
  'sim.seed': setting({ description: 'seed of everything the simulator generates', parse: int({ min: 0, max: 0xffffffff }), default: 1, env: 'SIM_SEED', flag: 'seed' }),
  'sim.host': setting({ description: 'address the simulator binds (loopback by default)', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'SIM_HOST', flag: 'host' }),
  'sim.rpcPort': setting({ description: 'Solana JSON-RPC over HTTP', parse: port(), default: 8899, env: 'SIM_RPC_PORT', flag: 'rpc-port' }),
  'sim.wsPort': setting({ description: 'Solana JSON-RPC PubSub over WebSocket', parse: port(), default: 8900, env: 'SIM_WS_PORT', flag: 'ws-port' }),
  'sim.streamPort': setting({ description: 'ShredStream gRPC (SubscribeEntries, SendHeartbeat)', parse: port(), default: 9999, env: 'SIM_STREAM_PORT', flag: 'stream-port' }),
  'sim.geyserPort': setting({ description: 'Yellowstone gRPC (Geyser) account stream (Subscribe, Ping): the scanner.stateSource geyser source', parse: port(), default: 10000, env: 'SIM_GEYSER_PORT', flag: 'geyser-port' }),
  'sim.httpPort': setting({ description: 'quote API, block engine and fault admin over HTTP', parse: port(), default: 8890, env: 'SIM_HTTP_PORT', flag: 'http-port' }),
  'sim.slotMs': setting({ description: 'slot duration', parse: duration({ min: 10 }), default: 400, env: 'SIM_SLOT_MS', flag: 'slot-ms' }),
  'sim.txRate': setting({ description: 'transactions per second in the generated flow', parse: int({ min: 0, max: 100_000 }), default: 2000, env: 'SIM_TX_RATE', flag: 'tx-rate' }),
  'sim.poolShare': setting({ description: 'share of generated transactions that swap on a pool (the rest is noise: votes, transfers)', parse: num({ min: 0, max: 1 }), default: 0.2, env: 'SIM_POOL_SHARE', flag: 'pool-share' }),
  'sim.lookupSwapShare': setting({ description: 'share of generated swaps sent as v0 transactions that load the pool and its accounts only through the address lookup tables (the rest are legacy, every key static)', parse: num({ min: 0, max: 1 }), default: 0.3, env: 'SIM_LOOKUP_SWAP_SHARE', flag: 'lookup-swap-share' }),
  'sim.tokens': setting({ description: 'tokens besides wrapped SOL and USDC', parse: int({ min: 0, max: 64 }), default: 6, env: 'SIM_TOKENS', flag: 'tokens' }),
  'sim.poolsPerKind': setting({ description: 'pools of each of the four kinds', parse: int({ min: 1, max: 256 }), default: 4, env: 'SIM_POOLS_PER_KIND', flag: 'pools-per-kind' }),
  'sim.slotsPerEpoch': setting({ description: 'slots per epoch (getEpochInfo; the epoch selects the Token-2022 mint TOLL\'s transfer fee, whose newer fee starts at epoch 2)', parse: int({ min: 1, max: 1_000_000_000 }), default: 432_000, env: 'SIM_SLOTS_PER_EPOCH', flag: 'slots-per-epoch' }),
  'sim.txsPerEntry': setting({ description: 'transactions per entry: the leader executes and records (streams) a slot\'s transactions in batches of this many (mainnet\'s entries carry a few to a few dozen)', parse: int({ min: 1, max: 1024 }), default: 8, env: 'SIM_TXS_PER_ENTRY', flag: 'txs-per-entry' }),
  'sim.faucetCapSol': setting({ description: 'per-request cap of requestAirdrop, in SOL (the faucet holds 1,000,000 SOL at genesis); a larger request is refused with -32603 as a test validator\'s faucet refuses one', parse: int({ min: 0, max: 1_000_000 }), default: 1000, env: 'SIM_FAUCET_CAP_SOL', flag: 'faucet-cap-sol' }),
  'sim.faultStall': setting({ description: 'start with the entry stream stalled', parse: bool(), default: false, env: 'SIM_FAULT_STALL', flag: 'fault-stall' }),
  'sim.faultGarbageRate': setting({ description: 'share of entry messages replaced by random bytes', parse: num({ min: 0, max: 1 }), default: 0, env: 'SIM_FAULT_GARBAGE_RATE', flag: 'fault-garbage-rate' }),
  'sim.faultTruncateRate': setting({ description: 'share of entry messages truncated', parse: num({ min: 0, max: 1 }), default: 0, env: 'SIM_FAULT_TRUNCATE_RATE', flag: 'fault-truncate-rate' }),
  'sim.faultRpcErrorRate': setting({ description: 'share of JSON-RPC calls answered with an internal error', parse: num({ min: 0, max: 1 }), default: 0, env: 'SIM_FAULT_RPC_ERROR_RATE', flag: 'fault-rpc-error-rate' }),
  'sim.faultRpcLatency': setting({ description: 'latency added to every JSON-RPC call', parse: duration(), default: 0, env: 'SIM_FAULT_RPC_LATENCY', flag: 'fault-rpc-latency' }),
  'sim.faultRejectBundles': setting({ description: 'reject every bundle', parse: bool(), default: false, env: 'SIM_FAULT_REJECT_BUNDLES', flag: 'fault-reject-bundles' }),
};

export type SimConfig = ConfigValues<typeof simSchema>;
