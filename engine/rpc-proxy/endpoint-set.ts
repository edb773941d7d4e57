import type { Logger } from '../obs/index.js';
import { invalidArgument } from '../errors.js';
import { EndpointState, type UpstreamEndpoint } from './upstream-endpoint.js';

/**
 * The upstream endpoints and who is in rotation: round robin over the endpoints in rotation, the
 * passive half of health checking (failed requests in a row take an endpoint out; the health
 * checker puts it back), and the state changes others follow (the WebSocket subscriptions leave
 * an endpoint that goes out).
 */

export type StateListener = (endpoint: UpstreamEndpoint, from: EndpointState) => void;

export class EndpointSet {
  readonly list: readonly UpstreamEndpoint[];
  private next = 0;
  private readonly listeners: StateListener[] = [];

  constructor(
    endpoints: readonly UpstreamEndpoint[],
    private readonly options: { failureThreshold: number; logger?: Logger },
  ) {
    if (endpoints.length === 0) throw invalidArgument('endpoints', 0, 'EndpointSet needs at least one endpoint');
    this.list = endpoints;
  }

  /** Endpoints in rotation now. */
  get inRotation(): number {
    let n = 0;
    for (const e of this.list) if (e.inRotation) n++;
    return n;
  }

  /**
   * The endpoint for the next attempt of a call that has tried the endpoints in `tried` (a bit
   * each): the next one in round-robin order that is in rotation and untried. When every endpoint
   * in rotation has been tried, the round starts again among them. When none is in rotation (the
   * checks may be stale, or every endpoint is down at once), every endpoint is tried in turn
   * rather than none.
   */
  pick(tried: number): UpstreamEndpoint {
    const list = this.list;
    const n = list.length;
    const from = this.next;
    let anyInRotation = false;
    for (let k = 0; k < n; k++) {
      const i = (from + k) % n;
      const e = list[i]!;
      if (!e.inRotation) continue;
      anyInRotation = true;
      if ((tried & e.bit) === 0) {
        this.next = i + 1;
        return e;
      }
    }
    for (let k = 0; k < n; k++) {
      const i = (from + k) % n;
      const e = list[i]!;
      if (anyInRotation ? e.inRotation : (tried & e.bit) === 0) {
        this.next = i + 1;
        return e;
      }
    }
    const e = list[from % n]!;
    this.next = from + 1;
    return e;
  }

  /** An answer other than 5xx / 429 came back: the run of failures ends. */
  recordSuccess(e: UpstreamEndpoint): void {
    e.consecutiveFailures = 0;
  }

  /** A request failed (network error, timeout, 5xx, 429); enough in a row take the endpoint out. */
  recordFailure(e: UpstreamEndpoint, reason: string): void {
    e.consecutiveFailures++;
    if (e.consecutiveFailures >= this.options.failureThreshold && e.inRotation) {
      this.setState(e, EndpointState.Down, `${e.consecutiveFailures} requests in a row failed, the last: ${reason}`);
    }
  }

  setState(e: UpstreamEndpoint, state: EndpointState, reason: string | null): void {
    e.reason = reason;
    if (e.state === state) return;
    const from = e.state;
    e.state = state;
    e.lastChangeUnixMs = Date.now();
    const log = this.options.logger;
    if (log !== undefined) {
      const fields = { endpoint: e.name, from, to: state, reason };
      if (state === EndpointState.Up) log.info(fields, 'rpc endpoint in rotation');
      else log.warn(fields, 'rpc endpoint out of rotation');
    }
    for (const listener of this.listeners) listener(e, from);
  }

  onStateChange(listener: StateListener): void {
    this.listeners.push(listener);
  }
}
