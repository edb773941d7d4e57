/**
 * Constant strings of the hot uWS paths (GET /quote, GET /swap/v1/quote), given to uWS as bytes.
 *
 * uWS.js copies every string argument into a malloc'd UTF-8 buffer (its NativeString) and takes a
 * typed array as it is, so the constant strings of a hot path are given as bytes; except under
 * uWS.js's pure-JS fallback (its UWS_USE_FALLBACK switch), whose methods take strings only.
 */
import type uws from '@trufflesuite/uws-js-unofficial';

import { STATUS } from './http-errors.js';

const UWS_NATIVE = !['true', 'True', 'TRUE', '1'].includes(process.env.UWS_USE_FALLBACK ?? '');

/** `text` as uWS takes it fastest: its UTF-8 bytes, or the string itself under the fallback. */
export function uwsString(text: string): uws.RecognizedString {
  return UWS_NATIVE ? new TextEncoder().encode(text) : text;
}

export const STATUS_200 = uwsString(STATUS[200]);
export const CONTENT_TYPE = uwsString('Content-Type');
export const APPLICATION_JSON = uwsString('application/json');
