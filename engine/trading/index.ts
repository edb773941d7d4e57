/**
 * engine/trading: what planners, executors and backtests share about routes: the pool view they
 * quote on (a pool cache filled from Solana JSON-RPC, `PlannerPools`) and the exact arithmetic of
 * a cycle or route over it (`cycleOutput`, `bestCycleInput`).
 */
export { bestCycleInput, cycleOutput, enumerateCycles, type ArbPoolState, type Cycle, type CycleLeg, type CycleResult, type PoolLookup, type SearchSettings } from './arbitrage-search.js';
export { PlannerPools, type PoolMembership } from './planner-pools.js';
