import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, TpError } from '../../errors.js';

/**
 * A small method + path router. Patterns are literal segments and `:name` parameters
 * (`/admin/faults/actions/:action`); a literal segment wins over a parameter at the same place.
 */

export interface RouteContext {
  url: URL;
  /** Values of the pattern's `:name` segments, URI-decoded. */
  params: Record<string, string>;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, ctx: RouteContext) => void | Promise<void>;

/** What a module needs to plug its routes in: SimHttpServer and Router both are one. */
export interface RouteRegistry {
  route(method: string, pattern: string, handler: RouteHandler): unknown;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string> }
  /** The path exists, not with this method. */
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' };

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: RouteHandler;
  /** Literal segments count, for precedence. */
  literals: number;
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

export class Router implements RouteRegistry {
  private readonly routes: Route[] = [];

  /** Adds a route. Throws when the same method and pattern are already routed. */
  route(method: string, pattern: string, handler: RouteHandler): this {
    if (!pattern.startsWith('/')) throw new TpError(ErrorCode.Internal, `route pattern must start with "/": ${pattern}`);
    const m = method.toUpperCase();
    const segments = split(pattern);
    const key = segments.map((s) => (s.startsWith(':') ? ':' : s)).join('/');
    for (const r of this.routes) {
      if (r.method === m && r.segments.map((s) => (s.startsWith(':') ? ':' : s)).join('/') === key) {
        throw new TpError(ErrorCode.Internal, `route ${m} ${pattern} conflicts with ${r.method} ${r.pattern}`);
      }
    }
    const literals = segments.filter((s) => !s.startsWith(':')).length;
    this.routes.push({ method: m, pattern, segments, handler, literals });
    this.routes.sort((a, b) => b.literals - a.literals);
    return this;
  }

  match(method: string, pathname: string): RouteMatch {
    const parts = split(pathname);
    const allowed = new Set<string>();
    const m = method.toUpperCase();
    for (const r of this.routes) {
      const params = matchSegments(r.segments, parts);
      if (params === undefined) continue;
      if (r.method === m) return { kind: 'found', handler: r.handler, params };
      allowed.add(r.method);
    }
    return allowed.size > 0 ? { kind: 'method', allowed: [...allowed].sort() } : { kind: 'none' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const part = parts[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(part);
      } catch {
        return undefined;
      }
    } else if (p !== part) {
      return undefined;
    }
  }
  return params;
}
