/**
 * The identity of a subscription as a node sees it: the method and its params as JSON values, not
 * as the bytes a client happened to write. Missing params and `[]` are the same; an object's keys
 * in any order are the same; whitespace does not count. Params that are not JSON keep their bytes
 * (the node will refuse them; two such clients share the refusal). Defaults a node fills in (a
 * commitment left out ≡ "finalized") are the node's to know: the hub also merges subscriptions to
 * which the node answers with one id (subscription-hub.ts).
 */
export function subscriptionKey(method: string, params: Uint8Array | null): string {
  if (params === null) return `${method}\u0000[]`;
  const text = Buffer.from(params).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${method}\u0000${text}`;
  }
  return `${method}\u0000${canonicalJson(value ?? [])}`;
}

/** JSON with object keys sorted at every depth. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
