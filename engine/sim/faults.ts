import { EventEmitter } from 'node:events';

/**
 * Faults the simulator injects on demand, so every failure path of the engine can be tested.
 * The servers consult this object on every request or message; the admin HTTP interface and the
 * `tidepool sim` flags set it. Rates are probabilities in [0, 1], drawn from the injector's own
 * seeded generator so a test's faults repeat.
 */

export interface RpcFault {
  /** Probability that a call fails with `errorCode`. */
  errorRate: number;
  errorCode: number;
  errorMessage: string;
  /** Added before answering, in ms. */
  latencyMs: number;
}

export interface StreamFaults {
  /** While true, SubscribeEntries streams stay open but send nothing. */
  stall: boolean;
  /** Probability that an Entry message carries random bytes instead of the entry vector. */
  garbageRate: number;
  /** Probability that an Entry message carries a truncated entry vector. */
  truncateRate: number;
}

export interface QuoteApiFault {
  latencyMs: number;
  /** Probability that /quote answers with `failStatus`. */
  failRate: number;
  failStatus: number;
}

export interface FaultSnapshot {
  stream: StreamFaults;
  rpc: Record<string, RpcFault>;
  quoteApi: QuoteApiFault;
  rejectBundles: boolean;
}

/** One-shot actions: they happen once, now. */
export type FaultAction = 'stream.disconnect' | 'ws.drop';

const DEFAULT_RPC_FAULT: RpcFault = { errorRate: 0, errorCode: -32603, errorMessage: 'Internal error (injected)', latencyMs: 0 };

export class FaultInjector extends EventEmitter<{ action: [FaultAction] }> {
  readonly stream: StreamFaults = { stall: false, garbageRate: 0, truncateRate: 0 };
  /** Per JSON-RPC method, or `*` for all methods. */
  readonly rpc = new Map<string, RpcFault>();
  readonly quoteApi: QuoteApiFault = { latencyMs: 0, failRate: 0, failStatus: 503 };
  rejectBundles = false;
  private state: number;

  constructor(seed = 1) {
    super();
    this.state = seed >>> 0 || 1;
  }

  /** A uniform draw in [0, 1) from xorshift32, so injected faults repeat for a given seed. */
  draw(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }

  happens(rate: number): boolean {
    return rate > 0 && (rate >= 1 || this.draw() < rate);
  }

  /** The fault for a JSON-RPC method: its own, else the `*` one, else none. */
  rpcFault(method: string): RpcFault | undefined {
    return this.rpc.get(method) ?? this.rpc.get('*');
  }

  setRpcFault(method: string, fault: Partial<RpcFault>): void {
    this.rpc.set(method, { ...DEFAULT_RPC_FAULT, ...this.rpc.get(method), ...fault });
  }

  trigger(action: FaultAction): void {
    this.emit('action', action);
  }

  clear(): void {
    Object.assign(this.stream, { stall: false, garbageRate: 0, truncateRate: 0 });
    this.rpc.clear();
    Object.assign(this.quoteApi, { latencyMs: 0, failRate: 0, failStatus: 503 });
    this.rejectBundles = false;
  }

  snapshot(): FaultSnapshot {
    return {
      stream: { ...this.stream },
      rpc: Object.fromEntries(this.rpc),
      quoteApi: { ...this.quoteApi },
      rejectBundles: this.rejectBundles,
    };
  }
}
