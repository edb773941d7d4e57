import type { Logger } from '../../obs/index.js';
import { MAX_SLOT_LAG, type RpcNode, type RpcNodes } from '../rpc-nodes.js';
import { FaultPatchInvalid, applyFaultPatch, parseFaultPatch } from './admin.js';
import { HttpError, HttpErrorCode, readJson, sendJson } from './http-io.js';
import type { RouteRegistry } from './router.js';

/**
 * RPC node admin: more JSON-RPC + PubSub port pairs over the simulator's chain (engine/sim/rpc-nodes.ts),
 * each with its own faults and slot lag, so that an RPC proxy can be put in front of several
 * nodes of one cluster, some of them down, slow or behind.
 *
 *   GET    /admin/rpc-nodes          → { nodes: RpcNodeSnapshot[] }
 *   POST   /admin/rpc-nodes          ← {"slotLag"?: n}                    → 201 RpcNodeSnapshot (started)
 *   GET    /admin/rpc-nodes/{id}     → RpcNodeSnapshot
 *   POST   /admin/rpc-nodes/{id}     ← {"running"?, "slotLag"?, "rpc"?, "action"?} → RpcNodeSnapshot
 *   DELETE /admin/rpc-nodes/{id}     → stops and removes it → {"id", "removed": true}
 *
 * `running: false` kills the node (connections cut, ports refused), `true` starts it again on the
 * same ports; `rpc` is the `rpc` part of a fault patch (per method `errorRate`, `errorCode`,
 * `errorMessage`, `latencyMs`; null removes), applied to this node only; `action: "ws.drop"` cuts
 * its PubSub connections. The body is validated whole before anything changes: 400 names the bad
 * field; 404 for an unknown node.
 */

export const RpcNodeAdminPath = {
  Nodes: '/admin/rpc-nodes',
  Node: '/admin/rpc-nodes/:id',
} as const;

const BODY_LIMIT = 64 * 1024;

function nodeOf(nodes: RpcNodes, raw: string | undefined): RpcNode {
  const id = /^[1-9]\d{0,8}$/.test(raw ?? '') ? Number(raw) : NaN;
  const node = Number.isNaN(id) ? undefined : nodes.get(id);
  if (node === undefined) throw new HttpError(404, HttpErrorCode.NotFound, `no rpc node ${JSON.stringify(raw)}`);
  return node;
}

function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, HttpErrorCode.InvalidParameter, 'body must be a JSON object');
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, `unknown field ${key}; expected one of ${allowed.join(', ')}`);
    }
  }
  return body as Record<string, unknown>;
}

function slotLagOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_SLOT_LAG) {
    throw new HttpError(400, HttpErrorCode.InvalidParameter, `slotLag must be an integer in [0, ${MAX_SLOT_LAG}], got ${JSON.stringify(value)}`);
  }
  return value;
}

export function mountRpcNodeAdmin(server: RouteRegistry, options: { nodes: RpcNodes; logger: Logger }): void {
  const { nodes, logger } = options;

  server.route('GET', RpcNodeAdminPath.Nodes, (req, res) => {
    req.resume();
    sendJson(res, 200, { nodes: nodes.list().map((n) => n.snapshot()) });
  });

  server.route('POST', RpcNodeAdminPath.Nodes, async (req, res) => {
    const raw = await readJson(req, BODY_LIMIT).catch((err: unknown) => {
      // An empty body adds a node with the defaults.
      if (err instanceof HttpError && err.code === HttpErrorCode.InvalidJson && /empty/.test(err.message)) return {};
      throw err;
    });
    const body = objectBody(raw, ['slotLag']);
    const node = await nodes.add(body['slotLag'] === undefined ? {} : { slotLag: slotLagOf(body['slotLag']) });
    sendJson(res, 201, node.snapshot());
  });

  server.route('GET', RpcNodeAdminPath.Node, (req, res, ctx) => {
    req.resume();
    sendJson(res, 200, nodeOf(nodes, ctx.params['id']).snapshot());
  });

  server.route('POST', RpcNodeAdminPath.Node, async (req, res, ctx) => {
    const node = nodeOf(nodes, ctx.params['id']);
    const body = objectBody(await readJson(req, BODY_LIMIT), ['running', 'slotLag', 'rpc', 'action']);
    // Validate everything first: a bad field changes nothing.
    const running = body['running'];
    if (running !== undefined && typeof running !== 'boolean') {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, `running must be true or false, got ${JSON.stringify(running)}`);
    }
    const slotLag = body['slotLag'] === undefined ? undefined : slotLagOf(body['slotLag']);
    const action = body['action'];
    if (action !== undefined && action !== 'ws.drop') {
      throw new HttpError(400, HttpErrorCode.InvalidParameter, `action must be "ws.drop", got ${JSON.stringify(action)}`);
    }
    let patch;
    try {
      patch = body['rpc'] === undefined ? undefined : parseFaultPatch({ rpc: body['rpc'] });
    } catch (err) {
      if (err instanceof FaultPatchInvalid) throw new HttpError(400, HttpErrorCode.InvalidParameter, err.message);
      throw err;
    }
    if (slotLag !== undefined) node.slotLag = slotLag;
    if (patch !== undefined) applyFaultPatch(node.faults, patch);
    if (action === 'ws.drop') node.faults.trigger('ws.drop');
    if (running === true) await node.start();
    if (running === false) await node.stop();
    logger.info({ id: node.id, running, slotLag, rpc: body['rpc'], action }, 'rpc node changed');
    sendJson(res, 200, node.snapshot());
  });

  server.route('DELETE', RpcNodeAdminPath.Node, async (req, res, ctx) => {
    req.resume();
    const node = nodeOf(nodes, ctx.params['id']);
    await nodes.remove(node.id);
    logger.info({ id: node.id }, 'rpc node removed');
    sendJson(res, 200, { id: node.id, removed: true });
  });
}
