/**
 * engine/sim: `tidepool sim`, the deterministic, seeded local Solana chain with its protocol
 * servers. What the rest of the engine may use; everything else in the folder is internal.
 *
 * - `createSimulator(config)`: the chain, the fault injector and the servers, started together.
 * - `SimChain`: the chain alone (ChainBackend for the servers, MarketView for the quote API);
 *   `manual: true` makes slots only on `advanceSlot()`.
 * - The swap instruction of the simulator's pools (swap-program.ts documents the format), and
 *   swap_v2 for the pools of TOLL, the market's Token-2022 mint with a transfer fee.
 * - The address lookup tables the chain keeps from genesis (address-lookup-tables.ts) and
 *   `SimChain.extendLookupTable()` / the `/admin/lookup-tables` routes that extend them.
 */
export { createSimulator, faultsFromConfig, type SimEndpoints, type SimServers, type Simulator, type SimulatorOptions } from './simulator.js';
export { RpcNode, RpcNodes, laggingView, MAX_SLOT_LAG, type RpcNodeOptions, type RpcNodeSnapshot } from './rpc-nodes.js';
export { RpcNodeAdminPath, mountRpcNodeAdmin } from './http/rpc-node-admin.js';
export { MarketAdminPath, mountMarketAdmin } from './http/market-admin.js';
export { GapDirection, PriceGapError, openPriceGap, type PriceGapRequest, type PriceGapResult } from './price-gap.js';
export { SimChain, SLOT_PIECES, type SimChainOptions, type SimChainStats } from './chain.js';
export { simSchema, type SimConfig } from './sim-config.js';
export { FaultInjector, type FaultAction, type FaultSnapshot, type QuoteApiFault, type RpcFault, type StreamFaults } from './faults.js';
export type { AccountRecord, BlockhashInfo, BundleStatus, ChainBackend, Commitment, EntryBatch, SignatureStatus, SignatureStatusOptions, SimulationResult, TokenBalance } from './chain-backend.js';
export { rpcError, isRpcError, RpcErrorCode, type RpcError } from './chain-backend.js';
export type { MarketView, SimPoolView, SimToken } from './market-view.js';
export type { SimPoolInfo, PoolArrayAccount } from './pool-genesis.js';
export type { Actors, Trader, Validator } from './actors.js';
export {
  SWAP_DATA_SIZE,
  SWAP_INSTRUCTION_TAG,
  SWAP_V2_INSTRUCTION_TAG,
  SwapProgramError,
  decodeSwapData,
  encodeSwapData,
  swapAccountsOf,
  swapArrays,
  swapInstruction,
  type SwapAccounts,
  type SwapInstructionData,
} from './swap-program.js';
export {
  LOOKUP_TABLE_MAX_ADDRESSES,
  LookupTableExtendError,
  encodeLookupTable,
  lookupTableAddress,
  poolSwapAccounts,
  readLookupTable,
  type LookupTableExtension,
  type LookupTableState,
  type SimLookupTable,
  type SimLookupTables,
} from './address-lookup-tables.js';
export { LookupTableAdminPath, type LookupTableJson } from './http/lookup-table-admin.js';
export { computeUnitLimit, computeUnitPrice, memoInstruction, systemTransfer } from './flow.js';
export { JITO_TIP_ACCOUNTS, TOKEN_2022_PROGRAM_ID, USDC_MINT, WSOL_MINT } from './known-accounts.js';
export { startSimulatorThread } from './sim-thread.js';
export { TOLL_NEWER_FEE_EPOCH, TOLL_SYMBOL, tollToken, tollTransferFees } from './market.js';
