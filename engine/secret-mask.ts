/**
 * The one place secrets are masked before anything is shown (issue 11, item 4): logs (engine/obs
 * logger), GET /config and /stats bodies, error messages sent to clients (engine/error-status.ts),
 * configuration errors (engine/config), metrics labels, `tidepool validate-config` output.
 *
 * What counts as a secret:
 * - the password of a URL's user info (`http://user:pass@host` → `http://user:***@host`), and a
 *   user name alone when it looks like a key (`https://<api key>@host` → `https://***@host`);
 *   a plain user name (`postgres://postgres@host`) is kept: operators need to see who connects;
 * - the value of a query parameter whose name says secret (`api-key`, `apikey`, `token`,
 *   `access_token`, `key`, `secret`, `password`, `auth`, `signature`, ...): `?api-key=***`;
 * - a path segment that looks like a key (24+ characters of letters and digits, with both): the
 *   `/v2/<key>` of hosted RPC providers;
 * - `Bearer <token>` and `Basic <credentials>` anywhere in text;
 * - `name=value` / `name: value` text outside URLs for the same secret names;
 * - in objects, the value of any field whose name says secret (password, token, secret, apiKey,
 *   authorization, privateKey, ...), whatever it holds.
 * A leaf module (no imports), so every folder may use it.
 */

export const MASK = '***';
export const REDACTED = '[redacted]';

/** Field names whose values are secrets (compared lower-case, `-`/`_`/`.` removed). */
const SECRET_FIELDS = new Set([
  'apikey',
  'token',
  'accesstoken',
  'authtoken',
  'refreshtoken',
  'idtoken',
  'secret',
  'clientsecret',
  'password',
  'passwd',
  'pwd',
  'authorization',
  'privatekey',
  'encryptedprivatekey',
  'credentials',
  'sessionid',
  'xapikey',
]);

/**
 * Query parameter names that are secrets besides SECRET_FIELDS: short names that in a log or a
 * body field mean something public (a transaction `signature`, a cache `key`), but in a provider
 * URL carry the credential.
 */
const SECRET_PARAMS = new Set([...SECRET_FIELDS, 'key', 'auth', 'pass', 'signature', 'sig']);

function normalizedName(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]/g, '');
}

/** Whether a field (or, with `param`, a URL query parameter) named `name` holds a secret. */
export function isSecretName(name: string, param = false): boolean {
  const n = normalizedName(name);
  if ((param ? SECRET_PARAMS : SECRET_FIELDS).has(n)) return true;
  // Dotted setting keys and compound names: `auth.jwtSecret`, `bus.token`, `rpcApiKey`.
  return /(password|secret|token|apikey|privatekey|authorization)$/.test(n);
}

/** A path segment that looks like an API key: long, letters and digits mixed. */
function looksLikeKey(segment: string): boolean {
  return segment.length >= 24 && /^[A-Za-z0-9_-]+$/.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment);
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`,]+/gi; // a comma ends it: lists of URLs are comma-separated
const AUTH_SCHEME_IN_TEXT = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const NAMED_VALUE_IN_TEXT = /\b([A-Za-z][A-Za-z0-9_.-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"'}]+)/g;

/**
 * `url` with its secrets masked (user info, secret query values, key-like path segments). Text that
 * is not a URL is returned with the text rules applied (see maskSecretsInText).
 */
export function maskUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(url);
  if (m === null) return url;
  const [, scheme, authority = '', path = '', query, fragment] = m;
  const at = authority.lastIndexOf('@');
  let host = authority;
  if (at >= 0) {
    const userInfo = authority.slice(0, at);
    const colon = userInfo.indexOf(':');
    const user = colon < 0 ? userInfo : userInfo.slice(0, colon);
    const shownUser = looksLikeKey(user) || user.length >= 20 ? MASK : user;
    host = `${colon < 0 ? shownUser : `${shownUser}:${MASK}`}@${authority.slice(at + 1)}`;
  }
  const maskedPath = path
    .split('/')
    .map((s) => (looksLikeKey(s) ? MASK : s))
    .join('/');
  let maskedQuery = '';
  if (query !== undefined) {
    maskedQuery =
      '?' +
      query
        .slice(1)
        .split('&')
        .map((pair) => {
          const eq = pair.indexOf('=');
          if (eq < 0) return pair;
          let name = pair.slice(0, eq);
          try {
            name = decodeURIComponent(name);
          } catch {
            // keep the raw name
          }
          return isSecretName(name, true) ? `${pair.slice(0, eq)}=${MASK}` : pair;
        })
        .join('&');
  }
  return `${scheme}${host}${maskedPath}${maskedQuery}${fragment ?? ''}`;
}

/**
 * `text` with every secret masked: each URL in it (maskUrl), `Bearer`/`Basic` credentials, and
 * `name=value` / `name: value` pairs whose name says secret. Cheap when there is nothing to mask.
 */
export function maskSecretsInText(text: string): string {
  if (text.length === 0) return text;
  let out = text;
  if (out.includes('://')) out = out.replace(URL_IN_TEXT, (u) => maskUrl(u));
  if (/Bearer|Basic/.test(out)) out = out.replace(AUTH_SCHEME_IN_TEXT, (_m, scheme: string) => `${scheme} ${MASK}`);
  if (out.includes('=') || out.includes(':')) {
    out = out.replace(NAMED_VALUE_IN_TEXT, (whole, name: string, sep: string, value: string) => {
      if (!isSecretName(name) || value === MASK || value.startsWith('//') || value === 'Bearer' || value === 'Basic') return whole;
      const quote = value.startsWith('"') || value.startsWith("'") ? value[0]! : '';
      return `${name}${sep}${quote}${MASK}${quote}`;
    });
  }
  return out;
}

/**
 * A copy of `value` with every secret masked: strings by maskSecretsInText, fields whose name says
 * secret replaced by `[redacted]` (an empty string stays empty: "not set" is no secret). Objects
 * nested deeper than `maxDepth` are replaced by `[depth]`; cycles by `[cycle]`. Bigints, numbers
 * and booleans pass through.
 */
export function maskSecrets<T>(value: T, maxDepth = 16): T {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return maskSecretsInText(v);
    if (v === null || typeof v !== 'object') return v;
    // Bytes, dates and collections hold no text to mask, and walking bytes index by index would
    // turn a Buffer into an object of numbers.
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Date || v instanceof Map || v instanceof Set || v instanceof RegExp) return v;
    if (seen.has(v)) return '[cycle]';
    if (depth >= maxDepth) return '[depth]';
    seen.add(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    if (v instanceof Error) return maskSecretsInText(v.message);
    // An object that says how it is shown (toJSON) is masked as it would be shown.
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return walk(toJSON.call(v), depth + 1);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = isSecretName(k) && x !== '' && x !== null && x !== undefined && typeof x !== 'boolean' ? REDACTED : walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0) as T;
}
