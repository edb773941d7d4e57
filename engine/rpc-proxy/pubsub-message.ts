import { member, objectMembers, skipSpace } from './json-scan.js';

/**
 * PubSub notifications as bytes: which subscription one is for, and the same bytes with another
 * subscription id. A notification is relayed to each client holding it with only its id changed;
 * its `result` (account data, logs, ...) is never decoded.
 *
 * Agave writes `{"jsonrpc":"2.0","method":"<x>Notification","params":{"result":...,"subscription":N}}`:
 * the id is the last member of the last member. That layout is read from both ends without
 * walking the result; any other member order is walked with json-scan.
 */

export interface Notification {
  method: string;
  subscription: number;
  /** Where the id's digits are in the bytes. */
  idStart: number;
  idEnd: number;
}

const PREFIX = Buffer.from('{"jsonrpc":"2.0","method":"');
const SUBSCRIPTION_KEY = Buffer.from('"subscription":');

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x39;
}

/** The notification in `buf`, or null when it is not one (a reply to a call, or malformed). */
export function readNotification(buf: Buffer): Notification | null {
  return agaveLayout(buf) ?? anyLayout(buf);
}

function agaveLayout(buf: Buffer): Notification | null {
  if (buf.length < PREFIX.length + 20 || buf.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length) !== 0) return null;
  const methodEnd = buf.indexOf(0x22, PREFIX.length);
  if (methodEnd < 0) return null;
  let end = buf.length;
  while (end > 0 && (buf[end - 1] === 0x20 || buf[end - 1] === 0x0a || buf[end - 1] === 0x0d || buf[end - 1] === 0x09)) end--;
  if (buf[end - 1] !== 0x7d || buf[end - 2] !== 0x7d) return null;
  const idEnd = end - 2;
  let idStart = idEnd;
  while (isDigit(buf[idStart - 1])) idStart--;
  if (idStart === idEnd || idEnd - idStart > 15) return null;
  const keyStart = idStart - SUBSCRIPTION_KEY.length;
  if (keyStart < 0 || buf.compare(SUBSCRIPTION_KEY, 0, SUBSCRIPTION_KEY.length, keyStart, idStart) !== 0) return null;
  // The member before must end with a comma or the object's brace: `,"subscription"` or `{"subscription"`.
  const before = buf[keyStart - 1];
  if (before !== 0x2c && before !== 0x7b) return null;
  return { method: buf.toString('latin1', PREFIX.length, methodEnd), subscription: Number(buf.toString('latin1', idStart, idEnd)), idStart, idEnd };
}

function anyLayout(buf: Buffer): Notification | null {
  const top = objectMembers(buf, 0, buf.length);
  if (top === null || member(top, 'id') !== undefined) return null;
  const method = member(top, 'method');
  const params = member(top, 'params');
  if (method === undefined || params === undefined || buf[method.start] !== 0x22) return null;
  const inner = objectMembers(buf, params.start, params.end);
  const sub = inner === null ? undefined : member(inner, 'subscription');
  if (sub === undefined) return null;
  const idStart = skipSpace(buf, sub.start, sub.end);
  for (let i = idStart; i < sub.end; i++) if (!isDigit(buf[i])) return null;
  if (sub.end === idStart || sub.end - idStart > 15) return null;
  let name: unknown;
  try {
    name = JSON.parse(buf.toString('utf8', method.start, method.end));
  } catch {
    return null;
  }
  return typeof name === 'string' ? { method: name, subscription: Number(buf.toString('latin1', idStart, sub.end)), idStart, idEnd: sub.end } : null;
}

/** The notification's bytes with `id` as its subscription id. */
export function withSubscriptionId(buf: Buffer, n: Notification, id: number): Buffer {
  return Buffer.concat([buf.subarray(0, n.idStart), Buffer.from(String(id)), buf.subarray(n.idEnd)]);
}

/**
 * Whether a notification ends its subscription: a signature subscription notifies once, when the
 * transaction reaches its commitment, and the node drops it then (a `receivedSignature`
 * notification, asked for with enableReceivedNotification, does not end it).
 */
export function endsSubscription(buf: Buffer, n: Notification): boolean {
  return n.method === 'signatureNotification' && !buf.includes('"receivedSignature"');
}
