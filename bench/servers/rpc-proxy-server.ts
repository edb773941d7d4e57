/**
 * The proxy process of the `rpc-proxy` bench suite: tidepool's RPC proxy (the same code as
 * `tidepool rpc-proxy`, default settings; `--rate-limit-rps` sets rate_limit_rps) in front of one
 * endpoint (`--endpoint`), on 127.0.0.1
 * and any free port. Same process shape as the other bench servers: one JSON ready line on
 * stdout once the first health check has passed and the port is bound, runs until stdin closes.
 */
import { parseArgs } from 'node:util';

import { createLogger } from '../../engine/obs/logger.js';
import { createRpcProxy, defaultRpcProxyConfig } from '../../engine/rpc-proxy/index.js';
import { finishStartup } from './common.js';

const { values } = parseArgs({ options: { endpoint: { type: 'string' }, 'rate-limit-rps': { type: 'string' } } });
if (values.endpoint === undefined) throw new Error('--endpoint is required');
const proxy = createRpcProxy(defaultRpcProxyConfig({ endpoints: [values.endpoint], port: 0, rate_limit_rps: Number(values['rate-limit-rps'] ?? 0) }), { logger: createLogger({ level: 'warn', stderr: true }) });
const port = await proxy.start();
const state = proxy.healthReport().endpoints[0]!.state;
void finishStartup({ port, endpointState: state }, () => proxy.close());
