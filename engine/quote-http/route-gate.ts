/**
 * The gate every quote and swap path of the uWS port passes, at the handler's top: the per-client
 * rate limit (refused at once), then, when auth is on, the JWT bearer check (http-bearer-auth.ts:
 * synchronous for a cached token, else a promise). Probes and metrics do not pass it.
 */
import type uws from '@trufflesuite/uws-js-unofficial';

import type { JwtVerifier } from '../auth/index.js';
import { checkBearer, type BearerOutcome } from './http-bearer-auth.js';
import type { HttpError } from './http-errors.js';

export interface GateHost {
  readonly auth: JwtVerifier | undefined;
  /** `authorization`: the Authorization header's value when auth is on, else ''. */
  rateLimit(res: uws.HttpResponse, authorization: string): HttpError | undefined;
}

export interface RouteGate {
  /** The gate's outcome: undefined (admitted), a refusal, or a promise of either. */
  gate(res: uws.HttpResponse, req: uws.HttpRequest): HttpError | BearerOutcome;
  /** Runs `then` once the gate admits; writes the refusal otherwise. `aborted` tells a gone client. */
  afterGate(res: uws.HttpResponse, outcome: HttpError | BearerOutcome, aborted: () => boolean, then: () => void, refuse?: (e: HttpError) => void): void;
  /** An onAborted flag for a GET whose answer may come later. */
  watch(res: uws.HttpResponse): () => boolean;
}

/** The gate of `host`; a refusal is written with `refuse` unless a path gives its own. */
export function createRouteGate(host: GateHost, refuse: (res: uws.HttpResponse, e: HttpError) => void): RouteGate {
  return {
    gate(res, req) {
      // The header is read only when auth is on: the limiter keys by it only then, and a header read makes a string.
      if (host.auth === undefined) return host.rateLimit(res, '');
      const authorization = req.getHeader('authorization');
      return host.rateLimit(res, authorization) ?? checkBearer(host.auth, authorization);
    },
    afterGate(res, outcome, aborted, then, refuseWith = (e) => refuse(res, e)) {
      if (outcome === undefined) {
        then();
        return;
      }
      if (!(outcome instanceof Promise)) {
        refuseWith(outcome);
        return;
      }
      void outcome.then((refusal) => {
        if (aborted()) return;
        if (refusal === undefined) then();
        else refuseWith(refusal);
      });
    },
    watch(res) {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      return () => aborted;
    },
  };
}
