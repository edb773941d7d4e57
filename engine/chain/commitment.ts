/**
 * A Solana commitment level: how settled a state or a transaction is (processed: in a block the node
 * has; confirmed: voted by a supermajority; finalized: rooted). One declaration for every chain
 * client, the RPC proxy and the simulator.
 */
export type Commitment = 'processed' | 'confirmed' | 'finalized';
