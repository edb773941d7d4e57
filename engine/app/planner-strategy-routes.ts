/**
 * The planner's strategy API (issue 27) on its ops port, every route behind the host's JWT auth
 * (on unless the port is bound to loopback, TIDEPOOL_AUTH), every change through StrategyAdmin
 * (the same checks as `tidepool strategies`); the running planner picks a change up within
 * planner.strategyReloadInterval (StrategyConfigWatcher).
 *
 *   GET    /strategies        200 {strategies: [StrategyView]}: status, order counts, open grid orders, position,
 *                             pnl (realized P&L, position, cost basis, fills, fees, tips: engine/planner/strategy-pnl.ts)
 *   GET    /strategies/{id}   200 detail: parameters, the latest grid orders with their side and status, position, pnl
 *                             (both with `running`: whether this planner runs the strategy now; an
 *                             enabled row of a type it was not started for runs in another planner)
 *   POST   /strategies        {type, params, enabled?} → 201 the row (400 naming the bad field)
 *   PATCH  /strategies/{id}   {enabled?, params?}: params merged over the row's (null drops a key),
 *                             checked, then enabled false pauses (open grid orders cancelled) and
 *                             true resumes → 200 {strategy, cancelled}
 *   DELETE /strategies/{id}   200 {strategy, cancelled}: the row and its grid orders removed
 *
 * Errors are `{"error":{"code","message"}}`: 400 TP_ERR_BAD_PARAMETER naming the field (`type`,
 * `params.levels`, …), 404 TP_ERR_NOT_FOUND for an id that is not a strategy, 405 with Allow,
 * 413 TP_ERR_PAYLOAD_TOO_LARGE over MAX_STRATEGY_BODY_BYTES, 401 without a valid token (auth on).
 * Amounts (u64) are decimal strings.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { ErrorCode, TpError, isTpError } from '../errors.js';
import { STRATEGIES, type Strategy } from '../messages/index.js';
import type { StrategyAdmin, StrategyConfigRow } from '../planner/index.js';
import { readLimitedBody } from '../scanner/index.js';
import { sendJson, type ServiceHost } from './service-host.js';

/** Bytes of a POST or PATCH /strategies body: parameters are a few hundred bytes. */
export const MAX_STRATEGY_BODY_BYTES = 16 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bad(parameter: string, message: string): TpError {
  return new TpError(ErrorCode.BadParameter, message, { context: { parameter } });
}

/** The JSON object of a request body, or 400 naming `body`. */
async function bodyObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readLimitedBody(req, MAX_STRATEGY_BODY_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('body', 'body is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('body', 'body must be a JSON object');
  return value as Record<string, unknown>;
}

function onlyKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) if (!allowed.includes(key)) throw bad(key, `${key} is not a field of this request (fields: ${allowed.join(', ')})`);
}

function paramsOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const params = body.params;
  if (params === undefined) return undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw bad('params', 'params must be a JSON object');
  return params as Record<string, unknown>;
}

function enabledOf(body: Record<string, unknown>): boolean | undefined {
  if (body.enabled === undefined) return undefined;
  if (typeof body.enabled !== 'boolean') throw bad('enabled', 'enabled must be true or false');
  return body.enabled;
}

/** A parameter the strategy refuses (TP_ERR_CONFIG_INVALID naming it) answered as 400 naming `params.<key>`. */
async function checked<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isTpError(err, ErrorCode.ConfigInvalid) && 'setting' in err.context) {
      const parameter = `params.${err.context.setting}`;
      throw new TpError(ErrorCode.BadParameter, `${parameter}: ${err.message}`, { context: { parameter }, cause: err });
    }
    throw err;
  }
}

/** The `{id}` of `/strategies/{id}`: a full uuid, else no such strategy. */
function idOf(req: IncomingMessage): string {
  const path = (req.url ?? '').split('?')[0]!;
  const id = decodeURIComponent(path.slice('/strategies/'.length));
  if (!UUID.test(id)) throw new TpError(ErrorCode.NotFound, `no strategy ${JSON.stringify(id)}: ids are uuids (GET /strategies)`, { context: { strategy: id } });
  return id.toLowerCase();
}

function rowJson(row: StrategyConfigRow): Record<string, unknown> {
  return { ...row, status: row.enabled ? 'enabled' : 'paused' };
}

/** Adds the strategy routes to the planner's host; `running()`: the ids of the strategies it runs now. */
export function addStrategyRoutes(host: ServiceHost, admin: StrategyAdmin, running: () => ReadonlySet<string>): void {
  const route = (method: string, path: string, handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void => host.route({ method, path, auth: true, handle });

  route('GET', '/strategies', async (_req, res) => {
    const strategies = await admin.overview();
    const now = running();
    sendJson(res, 200, { strategies: strategies.map((s) => ({ ...s, status: s.enabled ? 'enabled' : 'paused', running: now.has(s.id) })) });
  });

  route('POST', '/strategies', async (req, res) => {
    const body = await bodyObject(req);
    onlyKeys(body, ['type', 'params', 'enabled']);
    if (typeof body.type !== 'string' || !(STRATEGIES as readonly string[]).includes(body.type)) throw bad('type', `type must be one of ${STRATEGIES.join(', ')}, got ${JSON.stringify(body.type)}`);
    const params = paramsOf(body) ?? {};
    const enabled = enabledOf(body) ?? true;
    const row = await checked(() => admin.add(body.type as Strategy, params, enabled));
    res.setHeader('location', `/strategies/${row.id}`);
    sendJson(res, 201, rowJson(row));
  });

  route('GET', '/strategies/*', async (req, res) => {
    const detail = await admin.show(idOf(req), 100);
    sendJson(res, 200, { ...detail, status: detail.enabled ? 'enabled' : 'paused', running: running().has(detail.id) });
  });

  route('PATCH', '/strategies/*', async (req, res) => {
    const id = idOf(req);
    const body = await bodyObject(req);
    onlyKeys(body, ['enabled', 'params']);
    const params = paramsOf(body);
    const enabled = enabledOf(body);
    if (params === undefined && enabled === undefined) throw bad('body', 'give enabled (pause / resume) or params (a parameter change), or both');
    let row = params === undefined ? await admin.resolve(id) : await checked(() => admin.update(id, params));
    let cancelled = 0;
    if (enabled === false) ({ row, cancelled } = await admin.pause(id));
    else if (enabled === true) row = await checked(() => admin.resume(id));
    sendJson(res, 200, { strategy: rowJson(row), cancelled });
  });

  route('DELETE', '/strategies/*', async (req, res) => {
    const { row, cancelled } = await admin.remove(idOf(req));
    sendJson(res, 200, { strategy: rowJson(row), cancelled });
  });
}
