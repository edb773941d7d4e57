import { describe, expect, it } from 'vitest';

import { endsSubscription, readNotification, withSubscriptionId } from './pubsub-message.js';

const b = (s: string): Buffer => Buffer.from(s);

describe('PubSub notifications', () => {
  it('are read from both ends in the node\'s layout, the result untouched', () => {
    const text = '{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":5},"value":{"lamports":18446744073709551615,"data":["AA==","base64"]}},"subscription":42}}\n';
    const n = readNotification(b(text))!;
    expect(n).toMatchObject({ method: 'accountNotification', subscription: 42 });
    expect(withSubscriptionId(b(text), n, 7).toString()).toBe(text.replace('"subscription":42', '"subscription":7'));
  });

  it('are read in any other member order', () => {
    const text = '{"params":{"subscription": 3 ,"result":{"x":{"subscription":9}}},"method":"slotNotification","jsonrpc":"2.0"}';
    const n = readNotification(b(text))!;
    expect(n).toMatchObject({ method: 'slotNotification', subscription: 3 });
    expect(JSON.parse(withSubscriptionId(b(text), n, 11).toString())).toEqual({ params: { subscription: 11, result: { x: { subscription: 9 } } }, method: 'slotNotification', jsonrpc: '2.0' });
  });

  it('are not confused with replies or a result that ends like an id', () => {
    expect(readNotification(b('{"jsonrpc":"2.0","result":3,"id":1}'))).toBeNull();
    const tricky = '{"jsonrpc":"2.0","method":"logsNotification","params":{"subscription":1,"result":{"value":{"subscription":2}}}}';
    expect(readNotification(b(tricky))!.subscription).toBe(1);
    expect(readNotification(b('{"jsonrpc":"2.0","method":"x","params":{"subscription":"a"}}'))).toBeNull();
  });

  it('end a signature subscription unless they only say the signature was received', () => {
    const done = b('{"jsonrpc":"2.0","method":"signatureNotification","params":{"result":{"context":{"slot":5},"value":{"err":null}},"subscription":1}}');
    const received = b('{"jsonrpc":"2.0","method":"signatureNotification","params":{"result":{"context":{"slot":5},"value":"receivedSignature"},"subscription":1}}');
    expect(endsSubscription(done, readNotification(done)!)).toBe(true);
    expect(endsSubscription(received, readNotification(received)!)).toBe(false);
    const slot = b('{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"slot":1},"subscription":1}}');
    expect(endsSubscription(slot, readNotification(slot)!)).toBe(false);
  });
});
