/**
 * The JSON error body every HTTP port answers with (docs/architecture.md §3):
 * `{"error":{"code","message"}}`, `code` a `TP_ERR_*` code and `message` for people.
 */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}
