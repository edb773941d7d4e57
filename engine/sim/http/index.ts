/**
 * The simulator's HTTP server (loopback, default :8890): Jito block engine, fault admin, and
 * whatever else plugs in with `route()` (the /quote API).
 */
import { createLogger, type Logger } from '../../obs/index.js';
import type { FaultInjector } from '../faults.js';
import { mountFaultAdmin } from './admin.js';
import { BlockEngine, type BlockEngineBackend } from './block-engine.js';
import { SimHttpServer, type SimHttpServerOptions } from './sim-http-server.js';

export { SimHttpServer, SIM_HTTP_DEFAULT_HOST, SIM_HTTP_DEFAULT_PORT, isLoopbackHost, type SimHttpServerOptions } from './sim-http-server.js';
export { Router, type RouteContext, type RouteHandler, type RouteRegistry, type RouteMatch } from './router.js';
export { HttpError, HttpErrorCode, readBody, readJson, sendError, sendJson } from './http-io.js';
export {
  BlockEngine,
  BlockEnginePath,
  BUNDLE_DROPPED_CODE,
  BUNDLE_DROPPED_MESSAGE,
  INFLIGHT_WINDOW_MS,
  MAX_BUNDLE_IDS_PER_QUERY,
  MAX_BUNDLE_TRANSACTIONS,
  type BlockEngineBackend,
  type BlockEngineOptions,
  type BlockEngineStats,
  type InflightStatus,
} from './block-engine.js';
export { FaultAdminPath, FAULT_ACTIONS, FaultPatchInvalid, applyFaultPatch, mountFaultAdmin, parseFaultPatch, type FaultPatch } from './admin.js';
export {
  LookupTableAdminPath,
  mountLookupTableAdmin,
  type LookupTableAdminBackend,
  type LookupTableJson,
} from './lookup-table-admin.js';
export { deriveBundleId, firstSignature, transactionId } from './bundle-id.js';

export interface CreateSimHttpServerOptions extends SimHttpServerOptions {
  backend: BlockEngineBackend;
  faults: FaultInjector;
}

/** The simulator HTTP server with the block engine and the fault admin mounted (not started). */
export function createSimHttpServer(options: CreateSimHttpServerOptions): { server: SimHttpServer; blockEngine: BlockEngine } {
  const logger: Logger = options.logger ?? createLogger({ name: 'sim-http' });
  const server = new SimHttpServer({ ...options, logger });
  const blockEngine = new BlockEngine({ backend: options.backend, faults: options.faults, logger }).mount(server);
  mountFaultAdmin(server, { faults: options.faults, logger });
  return { server, blockEngine };
}
