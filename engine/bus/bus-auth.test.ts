/**
 * Bus credentials and TLS against real private nats-servers (JetStream, free loopback ports,
 * temporary stores): user/password, token and TLS with a certificate made by openssl for the test.
 * Right credentials connect and JetStream answers; wrong ones are TP_ERR_BUS_AUTH, at once, with no
 * secret in the message.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, TpError } from '../errors.js';
import { natsConnectOptions, redactServer } from './bus-auth.js';
import { BusConnection, BusStatus, connectBus } from './connection.js';
import { NATS_SERVER_MISSING, freePort } from './testing/cluster.js';
import { tcpReachable, waitFor } from './testing/local-nats.js';
import { natsOperatorFixture } from './testing/nats-operator.js';
import { busAuthOf, busAuthSchema, loadConfig, type BusAuth } from '../config/index.js';

const OPENSSL = spawnSync('openssl', ['version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'tp-bus-auth-'));
const servers: ChildProcess[] = [];

async function natsServer(args: string[]): Promise<string> {
  const port = await freePort();
  const store = mkdtempSync(join(dir, 'store-'));
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store, ...args], { stdio: 'ignore' });
  servers.push(child);
  await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, `nats-server on ${port}`);
  return `nats://127.0.0.1:${port}`;
}

async function refusalOf(promise: Promise<unknown>): Promise<TpError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TpError) return err;
    throw err;
  }
  throw new Error('connected');
}

/** Connects with BusConnection, checks JetStream answers, closes. */
async function jetStreamThrough(url: string, auth: BusAuth): Promise<void> {
  const bus = BusConnection.open({ servers: [url], name: 'tp-auth-test', auth, connectTimeoutMs: 2000 });
  try {
    await bus.ready();
    expect(bus.status).toBe(BusStatus.Connected);
    const jsm = await bus.jetstreamManager();
    expect((await jsm!.getAccountInfo()).limits).toBeDefined();
  } finally {
    await bus.close();
  }
}

afterAll(() => {
  for (const c of servers) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(NATS_SERVER_MISSING !== undefined)('bus credentials on a real nats-server', () => {
  let userUrl = '';
  let tokenUrl = '';
  beforeAll(async () => {
    userUrl = await natsServer(['--user', 'tidepool', '--pass', 'right-pass-1']);
    tokenUrl = await natsServer(['--auth', 'right-token-1']);
  });

  it('user and password: the right ones connect and reach JetStream', async () => {
    await jetStreamThrough(userUrl, { user: 'tidepool', password: 'right-pass-1' });
  });

  it('a wrong password is TP_ERR_BUS_AUTH at once, without the password in it', async () => {
    const bus = BusConnection.open({ servers: [userUrl], name: 'tp-auth-test', auth: { user: 'tidepool', password: 'wrong-pass-9' } });
    const err = await refusalOf(bus.ready());
    expect(err.code).toBe(ErrorCode.BusAuth);
    expect(err.message).toContain('refused the credentials');
    expect(err.message).not.toContain('wrong-pass-9');
    expect(bus.status).toBe(BusStatus.Disconnected);
    expect(bus.failure).toBe(err);
    await bus.close();
    const direct = await refusalOf(connectBus({ servers: [userUrl], name: 'tp-auth-test', auth: { user: 'tidepool', password: 'wrong-pass-9' } }));
    expect(direct.code).toBe(ErrorCode.BusAuth);
  });

  it('no credentials at all to a server that needs them is TP_ERR_BUS_AUTH', async () => {
    expect((await refusalOf(connectBus({ servers: [userUrl], name: 'tp-auth-test' }))).code).toBe(ErrorCode.BusAuth);
  });

  it('token: the right one connects, a wrong one is TP_ERR_BUS_AUTH', async () => {
    await jetStreamThrough(tokenUrl, { token: 'right-token-1' });
    const nc = await connectBus({ servers: [tokenUrl], name: 'tp-auth-test', auth: { token: 'right-token-1' } });
    await nc.close();
    const err = await refusalOf(connectBus({ servers: [tokenUrl], name: 'tp-auth-test', auth: { token: 'wrong-token-9' } }));
    expect(err.code).toBe(ErrorCode.BusAuth);
    expect(err.message).not.toContain('wrong-token-9');
  });
});

describe.skipIf(NATS_SERVER_MISSING !== undefined)('a NATS credentials file on a nats-server in operator mode', () => {
  it('a user of the trusted account connects with its creds file; one signed by an unknown account is TP_ERR_BUS_AUTH', async () => {
    const fixture = natsOperatorFixture();
    const conf = join(dir, 'operator.conf');
    writeFileSync(conf, fixture.serverConfig);
    const port = await freePort();
    servers.push(spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-c', conf], { stdio: 'ignore' }));
    await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, 'nats-server (operator mode)');
    const url = `nats://127.0.0.1:${port}`;
    const good = join(dir, 'good.creds');
    const bad = join(dir, 'bad.creds');
    writeFileSync(good, fixture.creds);
    writeFileSync(bad, fixture.untrustedCreds);
    const bus = BusConnection.open({ servers: [url], name: 'tp-creds-test', auth: { credsFile: good } });
    try {
      await bus.ready();
      expect(bus.status).toBe(BusStatus.Connected);
      await bus.connection!.flush();
    } finally {
      await bus.close();
    }
    const err = await refusalOf(connectBus({ servers: [url], name: 'tp-creds-test', auth: { credsFile: bad } }));
    expect(err.code).toBe(ErrorCode.BusAuth);
    const seed = fixture.untrustedCreds.split('\n').find((line) => line.startsWith('SU'))!;
    expect(err.message).not.toContain(seed);
  });
});

describe.skipIf(NATS_SERVER_MISSING !== undefined || !OPENSSL)('bus TLS on a real nats-server', () => {
  let tlsUrl = '';
  let caFile = '';
  beforeAll(async () => {
    const cert = join(dir, 'server.pem');
    const key = join(dir, 'server.key');
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    expect(made.status).toBe(0);
    caFile = cert;
    tlsUrl = await natsServer(['--tls', '--tlscert', cert, '--tlskey', key, '--user', 'tidepool', '--pass', 'right-pass-1']);
  });

  it('with the CA that signed the server certificate, connects over TLS and reaches JetStream', async () => {
    await jetStreamThrough(tlsUrl, { user: 'tidepool', password: 'right-pass-1', tls: { caFile } });
    const nc = await connectBus({ servers: [tlsUrl], name: 'tp-tls-test', auth: { user: 'tidepool', password: 'right-pass-1', tls: { caFile } } });
    expect(nc.info?.tls_required).toBe(true);
    await nc.close();
  });

  it('without that CA, a self-signed server certificate is refused: TP_ERR_BUS_AUTH naming TLS', async () => {
    const err = await refusalOf(connectBus({ servers: [tlsUrl], name: 'tp-tls-test', auth: { user: 'tidepool', password: 'right-pass-1', tls: {} } }));
    expect(err.code).toBe(ErrorCode.BusAuth);
    expect(err.message).toContain('TLS');
  });

  it('over TLS, a wrong password is still TP_ERR_BUS_AUTH', async () => {
    const err = await refusalOf(connectBus({ servers: [tlsUrl], name: 'tp-tls-test', auth: { user: 'tidepool', password: 'nope', tls: { caFile } } }));
    expect(err.code).toBe(ErrorCode.BusAuth);
  });
});

describe('bus auth settings', () => {
  it('are read from the environment into one BusAuth; a tls:// server implies TLS', () => {
    const { values } = loadConfig(busAuthSchema, { env: { NATS_USER: 'u', NATS_PASSWORD: 'p', NATS_TLS_CA_FILE: '/ca.pem' } });
    expect(busAuthOf(values)).toEqual({ user: 'u', password: 'p', tls: { caFile: '/ca.pem' } });
    expect(busAuthOf(loadConfig(busAuthSchema, { env: {} }).values)).toEqual({});
    expect(busAuthOf(loadConfig(busAuthSchema, { env: {} }).values, ['tls://bus.example.com:4222'])).toEqual({ tls: {} });
    expect(busAuthOf(loadConfig(busAuthSchema, { env: { NATS_TLS: 'true', NATS_TOKEN: 't' } }).values)).toEqual({ token: 't', tls: {} });
  });

  it('refuses combinations the server cannot mean, and files it cannot read, as TP_ERR_CONFIG_INVALID', () => {
    const code = (auth: BusAuth) => {
      try {
        natsConnectOptions(auth);
        return 'ok';
      } catch (err) {
        return (err as TpError).code;
      }
    };
    expect(code({ token: 't', user: 'u', password: 'p' })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ user: 'u' })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ password: 'p' })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ credsFile: join(dir, 'missing.creds') })).toBe(ErrorCode.ConfigInvalid);
    const notCreds = join(dir, 'not.creds');
    writeFileSync(notCreds, 'hello');
    expect(code({ credsFile: notCreds })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ tls: { certFile: '/c.pem' } })).toBe(ErrorCode.ConfigInvalid);
    expect(code({ tls: { caFile: join(dir, 'missing.pem') } })).toBe(ErrorCode.ConfigInvalid);
    expect(() => BusConnection.open({ servers: ['nats://127.0.0.1:1'], name: 'x', auth: { user: 'u' } })).toThrow(TpError);
    expect(code({ token: 't', tls: {} })).toBe('ok');
  });

  it('never prints a server URL with its user info', () => {
    expect(redactServer('nats://u:secret@bus.example.com:4222')).toBe('nats://bus.example.com:4222');
    expect(redactServer('bus.example.com:4222')).toBe('bus.example.com:4222');
  });
});
