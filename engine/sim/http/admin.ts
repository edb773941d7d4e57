import type { Logger } from '../../obs/index.js';
import type { FaultAction, FaultInjector, QuoteApiFault, RpcFault, StreamFaults } from '../faults.js';
import { HttpError, HttpErrorCode, readJson, sendJson } from './http-io.js';
import type { RouteRegistry } from './router.js';
import { ErrorCode, TpError } from '../../errors.js';

/**
 * Fault admin: read, set and clear the simulator's injected faults over HTTP.
 *
 *   GET    /admin/faults                    → the current FaultSnapshot
 *   POST   /admin/faults                    ← a FaultPatch (JSON); merged into the faults → snapshot
 *   DELETE /admin/faults                    → clears every fault → snapshot
 *   POST   /admin/faults/actions/{action}   → triggers a one-shot action (stream.disconnect, ws.drop)
 *
 * A patch sets only the fields it names. `{"rpc":{"getBalance":null}}` removes that method's
 * fault. The whole body is validated before anything is applied: an unknown field, a wrong type or
 * a rate outside [0, 1] answers 400 naming the field, and changes nothing.
 */

export const FaultAdminPath = {
  Faults: '/admin/faults',
  Action: '/admin/faults/actions/:action',
} as const;

export const FAULT_ACTIONS = ['stream.disconnect', 'ws.drop'] as const satisfies readonly FaultAction[];

const ADMIN_BODY_LIMIT = 64 * 1024;
/** Longest injectable latency: 5 minutes. */
const MAX_LATENCY_MS = 300_000;
const MAX_MESSAGE_LENGTH = 1000;
/** A JSON-RPC method name, or `*` for every method. */
const RPC_METHOD = /^(?:\*|[A-Za-z][A-Za-z0-9_]{0,63})$/;

export interface FaultPatch {
  stream?: Partial<StreamFaults>;
  /** null removes the method's fault. */
  rpc?: Record<string, Partial<RpcFault> | null>;
  quoteApi?: Partial<QuoteApiFault>;
  rejectBundles?: boolean;
}

export class FaultPatchInvalid extends TpError<typeof ErrorCode.BadParameter> {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(ErrorCode.BadParameter, message, { context: { parameter: field } });
  }
}

type Json = Record<string, unknown>;

function objectAt(value: unknown, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FaultPatchInvalid(field, `${field} must be an object`);
  }
  return value as Json;
}

function onlyKeys(obj: Json, prefix: string, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      const field = prefix === '' ? key : `${prefix}.${key}`;
      throw new FaultPatchInvalid(field, `unknown field ${field}; expected one of ${allowed.join(', ')}`);
    }
  }
}

function booleanAt(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new FaultPatchInvalid(field, `${field} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

function rateAt(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new FaultPatchInvalid(field, `${field} must be a number in [0, 1], got ${JSON.stringify(value)}`);
  }
  return value;
}

function integerAt(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FaultPatchInvalid(field, `${field} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_MESSAGE_LENGTH) {
    throw new FaultPatchInvalid(field, `${field} must be a non-empty string of at most ${MAX_MESSAGE_LENGTH} characters`);
  }
  return value;
}

/** Validates a POST /admin/faults body. Throws FaultPatchInvalid naming the first bad field. */
export function parseFaultPatch(body: unknown): FaultPatch {
  const root = objectAt(body, 'body');
  onlyKeys(root, '', ['stream', 'rpc', 'quoteApi', 'rejectBundles']);
  const patch: FaultPatch = {};

  if (root['stream'] !== undefined) {
    const s = objectAt(root['stream'], 'stream');
    onlyKeys(s, 'stream', ['stall', 'garbageRate', 'truncateRate']);
    const stream: Partial<StreamFaults> = {};
    if (s['stall'] !== undefined) stream.stall = booleanAt(s['stall'], 'stream.stall');
    if (s['garbageRate'] !== undefined) stream.garbageRate = rateAt(s['garbageRate'], 'stream.garbageRate');
    if (s['truncateRate'] !== undefined) stream.truncateRate = rateAt(s['truncateRate'], 'stream.truncateRate');
    patch.stream = stream;
  }

  if (root['rpc'] !== undefined) {
    const r = objectAt(root['rpc'], 'rpc');
    const rpc: Record<string, Partial<RpcFault> | null> = {};
    for (const [method, value] of Object.entries(r)) {
      const field = `rpc.${method}`;
      if (!RPC_METHOD.test(method)) throw new FaultPatchInvalid(field, `${field}: not a JSON-RPC method name (or "*")`);
      if (value === null) {
        rpc[method] = null;
        continue;
      }
      const f = objectAt(value, field);
      onlyKeys(f, field, ['errorRate', 'errorCode', 'errorMessage', 'latencyMs']);
      const fault: Partial<RpcFault> = {};
      if (f['errorRate'] !== undefined) fault.errorRate = rateAt(f['errorRate'], `${field}.errorRate`);
      if (f['errorCode'] !== undefined) {
        fault.errorCode = integerAt(f['errorCode'], `${field}.errorCode`, -2_147_483_648, 2_147_483_647);
      }
      if (f['errorMessage'] !== undefined) fault.errorMessage = stringAt(f['errorMessage'], `${field}.errorMessage`);
      if (f['latencyMs'] !== undefined) fault.latencyMs = integerAt(f['latencyMs'], `${field}.latencyMs`, 0, MAX_LATENCY_MS);
      rpc[method] = fault;
    }
    patch.rpc = rpc;
  }

  if (root['quoteApi'] !== undefined) {
    const q = objectAt(root['quoteApi'], 'quoteApi');
    onlyKeys(q, 'quoteApi', ['latencyMs', 'failRate', 'failStatus']);
    const quoteApi: Partial<QuoteApiFault> = {};
    if (q['latencyMs'] !== undefined) quoteApi.latencyMs = integerAt(q['latencyMs'], 'quoteApi.latencyMs', 0, MAX_LATENCY_MS);
    if (q['failRate'] !== undefined) quoteApi.failRate = rateAt(q['failRate'], 'quoteApi.failRate');
    if (q['failStatus'] !== undefined) quoteApi.failStatus = integerAt(q['failStatus'], 'quoteApi.failStatus', 400, 599);
    patch.quoteApi = quoteApi;
  }

  if (root['rejectBundles'] !== undefined) patch.rejectBundles = booleanAt(root['rejectBundles'], 'rejectBundles');
  return patch;
}

export function applyFaultPatch(faults: FaultInjector, patch: FaultPatch): void {
  if (patch.stream !== undefined) Object.assign(faults.stream, patch.stream);
  if (patch.rpc !== undefined) {
    for (const [method, fault] of Object.entries(patch.rpc)) {
      if (fault === null) faults.rpc.delete(method);
      else faults.setRpcFault(method, fault);
    }
  }
  if (patch.quoteApi !== undefined) Object.assign(faults.quoteApi, patch.quoteApi);
  if (patch.rejectBundles !== undefined) faults.rejectBundles = patch.rejectBundles;
}

export interface FaultAdminOptions {
  faults: FaultInjector;
  logger: Logger;
}

/** Plugs the fault admin routes into `server`. */
export function mountFaultAdmin(server: RouteRegistry, options: FaultAdminOptions): void {
  const { faults, logger } = options;

  server.route('GET', FaultAdminPath.Faults, (_req, res) => sendJson(res, 200, faults.snapshot()));

  server.route('POST', FaultAdminPath.Faults, async (req, res) => {
    const body = await readJson(req, ADMIN_BODY_LIMIT);
    let patch: FaultPatch;
    try {
      patch = parseFaultPatch(body);
    } catch (err) {
      if (err instanceof FaultPatchInvalid) throw new HttpError(400, HttpErrorCode.InvalidParameter, err.message);
      throw err;
    }
    applyFaultPatch(faults, patch);
    logger.info({ patch }, 'faults set');
    sendJson(res, 200, faults.snapshot());
  });

  server.route('DELETE', FaultAdminPath.Faults, (req, res) => {
    req.resume();
    faults.clear();
    logger.info('faults cleared');
    sendJson(res, 200, faults.snapshot());
  });

  server.route('POST', FaultAdminPath.Action, (req, res, ctx) => {
    req.resume();
    const action = ctx.params['action'] ?? '';
    if (!(FAULT_ACTIONS as readonly string[]).includes(action)) {
      throw new HttpError(404, HttpErrorCode.NotFound, `unknown fault action ${JSON.stringify(action)}; expected one of ${FAULT_ACTIONS.join(', ')}`);
    }
    faults.trigger(action as FaultAction);
    logger.info({ action }, 'fault action triggered');
    sendJson(res, 200, { action, triggeredAtMs: Date.now() });
  });
}
