/**
 * A test OTLP/HTTP trace receiver: a node:http server on a loopback port that accepts
 * `POST /v1/traces` (and any other path a test points the exporter at) with an
 * ExportTraceServiceRequest in either OTLP encoding, and collects the spans flat:
 *
 *   application/json        the OTLP JSON mapping (ids as hex strings; what
 *                           @opentelemetry/exporter-trace-otlp-http sends)
 *   application/x-protobuf  the OTLP protobuf (ids as bytes), read by the small wire reader below
 *
 * It answers 200 with an empty ExportTraceServiceResponse in the request's encoding, 415 for other
 * content types, 400 for a body it cannot read, 405 for other methods.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };

/** OTLP `Span.SpanKind` by number. */
export const SPAN_KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;
export type CollectedSpanKind = (typeof SPAN_KINDS)[number];

export interface CollectedSpan {
  /** 32 lowercase hex chars. */
  traceId: string;
  /** 16 lowercase hex chars. */
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: CollectedSpanKind;
  attributes: Record<string, AttributeValue>;
  /** The resource's `service.name`. */
  serviceName: string | undefined;
}

export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: IncomingMessage['headers'];
  spans: number;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: CollectedSpan[];
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: CollectedSpan[] = [];
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    void handle(req, res, spans, requests);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, spans: CollectedSpan[], requests: ReceivedRequest[]): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  let received: CollectedSpan[];
  try {
    if (contentType === 'application/json') received = spansFromJson(JSON.parse(body.toString('utf8')));
    else if (contentType === 'application/x-protobuf') received = spansFromProtobuf(body);
    else {
      res.writeHead(415).end();
      return;
    }
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
    return;
  }
  spans.push(...received);
  requests.push({ path: new URL(req.url ?? '/', 'http://x').pathname, contentType, headers: req.headers, spans: received.length });
  if (contentType === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
}

// ---- OTLP JSON ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  bytesValue?: string;
  arrayValue?: { values?: JsonAnyValue[] };
  kvlistValue?: { values?: { key: string; value?: JsonAnyValue }[] };
}

function jsonValue(v: JsonAnyValue | undefined): AttributeValue {
  if (v === undefined) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.bytesValue !== undefined) return v.bytesValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(jsonValue);
  if (v.kvlistValue !== undefined) return jsonAttributes(v.kvlistValue.values);
  return null;
}

function jsonAttributes(list: { key: string; value?: JsonAnyValue }[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list ?? []) out[kv.key] = jsonValue(kv.value);
  return out;
}

/** Ids in the OTLP JSON mapping are hex; tolerate base64 (the protobuf JSON default) too. */
function jsonId(id: string | undefined, bytes: number): string {
  if (id === undefined || id === '') return '';
  if (id.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

function spansFromJson(request: unknown): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  const resourceSpans = (request as { resourceSpans?: unknown[] }).resourceSpans ?? [];
  for (const rs of resourceSpans as { resource?: { attributes?: { key: string; value?: JsonAnyValue }[] }; scopeSpans?: { spans?: unknown[] }[] }[]) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of (ss.spans ?? []) as { traceId?: string; spanId?: string; parentSpanId?: string; name?: string; kind?: number; attributes?: { key: string; value?: JsonAnyValue }[] }[]) {
        out.push({
          traceId: jsonId(s.traceId, 16),
          spanId: jsonId(s.spanId, 8),
          parentSpanId: jsonId(s.parentSpanId, 8),
          name: s.name ?? '',
          kind: SPAN_KINDS[s.kind ?? 0] ?? 'UNSPECIFIED',
          attributes: jsonAttributes(s.attributes),
          serviceName: typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined,
        });
      }
    }
  }
  return out;
}

// ---- OTLP protobuf (opentelemetry/proto/collector/trace/v1, trace/v1, common/v1) ----

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

type Field = { no: number; wire: typeof WIRE_VARINT; value: bigint } | { no: number; wire: typeof WIRE_LEN; value: Uint8Array } | { no: number; wire: typeof WIRE_I64 | typeof WIRE_I32; value: Uint8Array };

/** The fields of one message, in order; bounds-checked, throws on truncation or unknown wire types. */
function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new Error('varint too long');
  };
  const take = (n: number): Uint8Array => {
    if (n < 0 || pos + n > buf.length) throw new Error('length beyond the message');
    const v = buf.subarray(pos, pos + n);
    pos += n;
    return v;
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === WIRE_VARINT) out.push({ no, wire, value: varint() });
    else if (wire === WIRE_LEN) out.push({ no, wire, value: take(Number(varint())) });
    else if (wire === WIRE_I64) out.push({ no, wire, value: take(8) });
    else if (wire === WIRE_I32) out.push({ no, wire, value: take(4) });
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const lenFields = (buf: Uint8Array, no: number): Uint8Array[] => fields(buf).flatMap((f) => (f.no === no && f.wire === WIRE_LEN ? [f.value] : []));

/** common.v1.AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue, 6 KeyValueList, 7 bytes. */
function protoValue(buf: Uint8Array): AttributeValue {
  for (const f of fields(buf)) {
    if (f.no === 1 && f.wire === WIRE_LEN) return text(f.value);
    if (f.no === 2 && f.wire === WIRE_VARINT) return f.value !== 0n;
    if (f.no === 3 && f.wire === WIRE_VARINT) return Number(BigInt.asIntN(64, f.value));
    if (f.no === 4 && f.wire === WIRE_I64) return Buffer.from(f.value).readDoubleLE(0);
    if (f.no === 5 && f.wire === WIRE_LEN) return lenFields(f.value, 1).map(protoValue);
    if (f.no === 6 && f.wire === WIRE_LEN) return protoAttributes(lenFields(f.value, 1));
    if (f.no === 7 && f.wire === WIRE_LEN) return Buffer.from(f.value).toString('base64');
  }
  return null;
}

/** Repeated common.v1.KeyValue: 1 key, 2 value. */
function protoAttributes(keyValues: Uint8Array[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of keyValues) {
    let key = '';
    let value: AttributeValue = null;
    for (const f of fields(kv)) {
      if (f.no === 1 && f.wire === WIRE_LEN) key = text(f.value);
      else if (f.no === 2 && f.wire === WIRE_LEN) value = protoValue(f.value);
    }
    out[key] = value;
  }
  return out;
}

/**
 * ExportTraceServiceRequest: 1 ResourceSpans (1 Resource{1 attributes}, 2 ScopeSpans{2 Span}).
 * Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes.
 */
function spansFromProtobuf(body: Uint8Array): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const rs of lenFields(body, 1)) {
    const resourceBytes = lenFields(rs, 1)[0];
    const resource = resourceBytes === undefined ? {} : protoAttributes(lenFields(resourceBytes, 1));
    const serviceName = typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined;
    for (const ss of lenFields(rs, 2)) {
      for (const span of lenFields(ss, 2)) {
        const s: CollectedSpan = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 'UNSPECIFIED', attributes: {}, serviceName };
        const attrs: Uint8Array[] = [];
        for (const f of fields(span)) {
          if (f.wire === WIRE_LEN && f.no === 1) s.traceId = hex(f.value);
          else if (f.wire === WIRE_LEN && f.no === 2) s.spanId = hex(f.value);
          else if (f.wire === WIRE_LEN && f.no === 4) s.parentSpanId = hex(f.value);
          else if (f.wire === WIRE_LEN && f.no === 5) s.name = text(f.value);
          else if (f.wire === WIRE_VARINT && f.no === 6) s.kind = SPAN_KINDS[Number(f.value)] ?? 'UNSPECIFIED';
          else if (f.wire === WIRE_LEN && f.no === 9) attrs.push(f.value);
        }
        s.attributes = protoAttributes(attrs);
        out.push(s);
      }
    }
  }
  return out;
}
