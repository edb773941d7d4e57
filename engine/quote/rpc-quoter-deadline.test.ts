import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { createDecoderRegistry, Dex } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import { RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { PoolDirectory } from './pool-directory.js';
import { RpcQuoter } from './rpc-quoter.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qJxdBDjtrjqaqNc2GTxD6ZPdwG';
const POOL = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';

describe('RpcQuoter deadline', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('answers Deadline and aborts the RPC request it was waiting for', async () => {
    // An upstream that reads the request and never answers.
    const requests: IncomingMessage[] = [];
    const server = createServer((req) => {
      requests.push(req);
      req.resume();
    });
    const arrived = once(server, 'request');
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    closers.push(async () => {
      server.closeAllConnections();
    });
    const { port } = server.address() as AddressInfo;

    // A request timeout far beyond the test's: only the deadline's abort can close the request.
    const client = new RpcClient({ endpoints: [`http://127.0.0.1:${port}`], timeoutMs: 600_000 });
    closers.push(() => client.close());
    const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(client), registry: createDecoderRegistry() });
    const directory = new PoolDirectory();
    directory.add({ address: POOL, dex: Dex.Whirlpool, tokenA: SOL, tokenB: USDC });
    const quoter = new RpcQuoter({ loader, directory, cache: undefined, deadlineMs: 50 });

    const answer = quoter.quote(SOL, USDC, 1_000_000n);
    const [req] = (await arrived) as [IncomingMessage];
    const closed = once(req.socket, 'close');

    const failure = await answer;
    expect(failure.ok).toBe(false);
    expect(failure.ok ? undefined : failure.code).toBe(ErrorCode.Deadline);
    // The loser does not keep running: the upstream sees its request's connection closed.
    await closed;
    expect(requests).toHaveLength(1);
  });
});
