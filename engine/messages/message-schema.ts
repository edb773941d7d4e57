/**
 * The JSON Schemas of the platform messages (schemas/*.schema.json), compiled once each with Ajv,
 * and the one way a message is checked against its schema: every violation collected, the first
 * one reported as TP_ERR_MESSAGE_INVALID with the JSON pointer of the offending field.
 */
import { readFileSync } from 'node:fs';

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

import { ErrorCode, TpError } from '../errors.js';
import { packagePath } from '../package-files.js';

const compiled = new Map<string, ValidateFunction>();
let ajv: Ajv | undefined;

/** Absolute path of `schemas/<file>` in the package (source and dist alike). */
export function messageSchemaPath(file: string): string {
  return packagePath('schemas', file);
}

function validatorFor(file: string): ValidateFunction {
  const known = compiled.get(file);
  if (known !== undefined) return known;
  ajv ??= new Ajv({ allErrors: true, strict: true });
  const fn = ajv.compile(JSON.parse(readFileSync(messageSchemaPath(file), 'utf8')) as object);
  compiled.set(file, fn);
  return fn;
}

function describe(e: ErrorObject): { path: string; message: string } {
  const base = e.instancePath;
  if (e.keyword === 'required') return { path: `${base}/${(e.params as { missingProperty: string }).missingProperty}`, message: 'is required' };
  if (e.keyword === 'additionalProperties') return { path: `${base}/${(e.params as { additionalProperty: string }).additionalProperty}`, message: 'is not a field of this message' };
  return { path: base === '' ? '/' : base, message: e.message ?? e.keyword };
}

/** Every violation of `value` against `schemas/<file>`, as `path: message`. Empty when it conforms. */
export function schemaViolationsOf(file: string, value: unknown): string[] {
  const validate = validatorFor(file);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const d = describe(e);
    return `${d.path}: ${d.message}`;
  });
}

/** Throws TP_ERR_MESSAGE_INVALID naming `title` and every violation unless `value` conforms. */
export function assertSchema(file: string, title: string, value: unknown): void {
  const violations = schemaViolationsOf(file, value);
  if (violations.length === 0) return;
  throw invalidMessage(title, violations);
}

/** The error for a message that breaks its format: `context.path` is the first offending field. */
export function invalidMessage(title: string, violations: readonly string[]): TpError {
  const path = violations[0]!.split(':')[0]!;
  return new TpError(ErrorCode.MessageInvalid, `invalid ${title}: ${violations.join('; ')}`, { context: { message: title, path, violations } });
}

/** Parses message bytes as JSON, or throws TP_ERR_MESSAGE_INVALID. */
export function parseMessageJson(title: string, bytes: Uint8Array | string): unknown {
  const text = typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new TpError(ErrorCode.MessageInvalid, `invalid ${title}: not JSON (${(err as Error).message})`, { cause: err, context: { message: title, path: '/' } });
  }
}
