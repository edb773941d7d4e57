/**
 * A RoutePublisher for running without a bus (-bus-enabled=false, or until the JetStream publisher
 * is wired): every event is counted as dropped, nothing is sent.
 */
import type { RoutePublisher, RoutePublisherStats } from './contracts.js';

export function disabledRoutePublisher(): RoutePublisher {
  let dropped = 0;
  return {
    publish() {
      dropped++;
    },
    stats(): RoutePublisherStats {
      return { enabled: false, connected: false, published: 0, errors: 0, pending: 0, dropped };
    },
    close() {
      return Promise.resolve();
    },
  };
}
