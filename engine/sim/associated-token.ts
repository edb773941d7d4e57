/** The associated token account address, as engine/chain derives it (the simulator's programs and actors use the same). */
export { associatedTokenAddress } from '../chain/index.js';
