/**
 * `tidepool external-quotes` as a process runs it (spec 01): the external upstream quote service
 * (engine/external: provider client, breaker, poller, gRPC StreamBatchQuotes on grpcPort, /metrics,
 * /health, /ready on metrics.port) assembled by the ServiceHost (service-host.ts): the close stack,
 * SIGTERM (`host.untilShutdown`) and the `system:health:external-quotes` heartbeat when given a key
 * space (REDIS_URL). The service's two ports stay its own (its /health answers 503 while the
 * provider's breaker is open, which the host's ops port does not); the host binds them, so a port
 * in use is TP_ERR_IO naming grpcPort or metrics.port. No bus: the service publishes nothing.
 */
import { createExternalQuoteService, type ExternalEndpoints, type ExternalQuoteService, type ExternalQuotesConfig } from '../external/index.js';
import type { Logger } from '../obs/index.js';
import type { KeySpace } from '../state/index.js';
import { ServiceHost } from './service-host.js';

export interface ExternalQuotesApp {
  /** The heartbeat, the close stack, SIGTERM. */
  readonly host: ServiceHost;
  readonly service: ExternalQuoteService;
  /** Binds the gRPC and metrics ports, then starts the heartbeat. */
  start(): Promise<ExternalEndpoints>;
  /** Ends the streams, stops polling, closes the ports, then the heartbeat. Idempotent. */
  close(): Promise<void>;
}

export interface ExternalQuotesAppOptions {
  logger: Logger;
  defaultMetrics?: boolean;
  /** Where the `system:health:external-quotes` heartbeat goes (the host closes its store); none: no heartbeat. */
  heartbeat?: KeySpace;
}

export async function createExternalQuotesApp(config: ExternalQuotesConfig, options: ExternalQuotesAppOptions): Promise<ExternalQuotesApp> {
  return ServiceHost.assemble({ service: 'external-quotes', logger: options.logger }, async (host) => {
    const keys = options.heartbeat;
    if (keys !== undefined) {
      host.onClose('key space', () => keys.store.close());
      host.heartbeatTo(keys);
    }
    const service = createExternalQuoteService(config, { logger: options.logger, defaultMetrics: options.defaultMetrics ?? true });
    host.onClose('external quote service', () => service.close());
    return {
      host,
      service,
      async start() {
        const endpoints = await service.start((port, bind) => host.listen(port, bind));
        await host.start();
        return endpoints;
      },
      close: () => host.close(),
    };
  });
}
