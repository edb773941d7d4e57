/**
 * engine/platform: the trading platform of spec 03 around the quote engine. What the rest of the
 * engine may use, by part:
 * - rpc-proxy/: `tidepool rpc-proxy`, one Solana JSON-RPC front over several RPC endpoints.
 */
export * from './rpc-proxy/index.js';
