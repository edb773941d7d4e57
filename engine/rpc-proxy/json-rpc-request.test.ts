import { describe, expect, it } from 'vitest';

import { parseRequest, parseRequestWithJson, plainSingleCall, type RpcCall } from './json-rpc-request.js';

const parse = (s: string | Buffer) => parseRequest(typeof s === 'string' ? Buffer.from(s) : s);
const replyOf = (p: ReturnType<typeof parse>): any => (p.kind === 'reply' ? JSON.parse(p.reply.toString()) : undefined);

describe('parseRequest', () => {
  it('reads a single call, read or write, and its raw parts', () => {
    const p = parse('{"jsonrpc":"2.0","id":18446744073709551615,"method":"getBalance","params":["x",{"minContextSlot":9007199254740993}]}');
    expect(p.kind).toBe('call');
    const call = (p as { call: RpcCall }).call;
    expect(call).toMatchObject({ method: 'getBalance', hasId: true, read: true });
    expect(Buffer.from(call.id!).toString()).toBe('18446744073709551615');
    expect(Buffer.from(call.params!).toString()).toBe('["x",{"minContextSlot":9007199254740993}]');
    expect(Buffer.from(call.methodBytes).toString()).toBe('"getBalance"');
    const write = parse('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AQ=="]}');
    expect((write as { call: RpcCall }).call.read).toBe(false);
    expect((parse('{"jsonrpc":"2.0","id":1,"method":"someNewMethod"}') as { call: RpcCall }).call.read).toBe(false);
  });

  it('marks notifications (no id)', () => {
    const p = parse('{"jsonrpc":"2.0","method":"getSlot"}') as { call: RpcCall };
    expect(p.call.hasId).toBe(false);
    expect(p.call.id).toBeNull();
  });

  it('answers a parse error for bad JSON and bytes that are not UTF-8', () => {
    for (const bad of ['', '{', 'nul', '{"a":1}}', Buffer.from([0x22, 0xc3, 0x28, 0x22])]) {
      expect(replyOf(parse(bad))).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    }
  });

  it('answers invalid requests with the call\'s id when that id is valid', () => {
    expect(replyOf(parse('{"jsonrpc":"2.0","id":"q"}'))).toMatchObject({ id: 'q', error: { code: -32600 } });
    expect(replyOf(parse('{"jsonrpc":"2.0","id":-1,"method":"getSlot"}'))).toMatchObject({ id: null, error: { code: -32600 } });
    expect(replyOf(parse('{"jsonrpc":"2.0","id":1.5,"method":"getSlot"}'))).toMatchObject({ id: null });
    expect(replyOf(parse('{"id":1,"method":"getSlot"}'))).toMatchObject({ id: 1, error: { message: 'Invalid request: jsonrpc must be "2.0"' } });
    expect(replyOf(parse('{"jsonrpc":"2.0","id":1,"method":"getSlot","params":"x"}'))).toMatchObject({ error: { message: 'Invalid request: params must be an array or an object' } });
    expect(replyOf(parse('{"jsonrpc":"2.0","id":1,"method":""}'))).toMatchObject({ error: { code: -32600 } });
    expect(replyOf(parse('[]'))).toMatchObject({ id: null, error: { code: -32600, message: 'Invalid request: empty batch' } });
    expect(replyOf(parse('7'))).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('reads a batch item by item, raw spans of each', () => {
    const p = parse(' [ {"jsonrpc":"2.0","id":1,"method":"getSlot"} , 5, {"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":[],"method":"y"} ] ');
    expect(p.kind).toBe('batch');
    const items = (p as { items: (RpcCall | Buffer)[] }).items;
    expect(items).toHaveLength(4);
    expect((items[0] as RpcCall).raw.toString()).toBe('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
    expect(JSON.parse((items[1] as Buffer).toString())).toMatchObject({ id: null, error: { code: -32600 } });
    expect((items[2] as RpcCall).hasId).toBe(false);
    expect(JSON.parse((items[3] as Buffer).toString())).toMatchObject({ id: null, error: { code: -32600 } });
  });
});

describe('parseRequest fast path for single calls', () => {
  const summary = (p: ReturnType<typeof parseRequest>): unknown => {
    if (p.kind === 'reply') return { kind: 'reply', reply: p.reply.toString() };
    if (p.kind === 'batch') return { kind: 'batch', n: p.items.length };
    const c = p.call;
    const bytes = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString());
    return { kind: 'call', method: c.method, hasId: c.hasId, read: c.read, raw: c.raw.toString(), id: bytes(c.id), params: bytes(c.params), methodBytes: bytes(c.methodBytes) };
  };

  it('reads a plain call without JSON.parse', () => {
    const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":["58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2",{"encoding":"base64","commitment":"processed"}]}');
    expect(plainSingleCall(body)).not.toBeNull();
    expect(plainSingleCall(Buffer.from(' { "method" : "getSlot" , "jsonrpc" : "2.0" } '))).not.toBeNull();
  });

  it('gives what the JSON.parse path gives, for valid and invalid bodies alike', () => {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":["x",{"encoding":"base64"}]}',
      '{"jsonrpc":"2.0","id":18446744073709551615,"method":"getBalance","params":["x",{"minContextSlot":9007199254740993}]}',
      '{"jsonrpc":"2.0","id":"abc","method":"sendTransaction","params":["AQ=="]}',
      '{"jsonrpc":"2.0","id":null,"method":"getSlot","params":null}',
      '{"jsonrpc":"2.0","method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":{}}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[]}',
      '\t\r\n{"jsonrpc":"2.0","id":0,"method":"getSlot"}\n',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[1.5e-3,-0,0.1,1E+2,true,false,null,"\\u00e9\\n\\"",[[{}]]]}',
      '{"jsonrpc":"2.0","id":-1,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1.0,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1e2,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1.5,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":true,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":[1],"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":01,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1,"method":""}',
      '{"jsonrpc":"2.0","id":1,"method":"get\\u0053lot"}',
      '{"jsonrpc":"2.0","id":1,"method":7}',
      '{"jsonrpc":"1.0","id":1,"method":"getSlot"}',
      '{"jsonrpc":"2.0 ","id":1,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":5}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":"x"}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[tru]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[1,]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[01]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[1.]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[-]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":["\\x"]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":["\\u12g4"]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":["a\tb"]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":{"a":1,}}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":{"a" 1}}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":["é"]}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","extra":1}',
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot"} x',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot"',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot",}',
      '\ufeff{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":' + '['.repeat(100) + ']'.repeat(100) + '}',
      '[{"jsonrpc":"2.0","id":1,"method":"getSlot"}]',
      '{}',
      '',
    ];
    for (const body of bodies) {
      const bytes = Buffer.from(body);
      expect(summary(parseRequest(bytes)), body).toEqual(summary(parseRequestWithJson(bytes)));
    }
  });
});
