/**
 * Test harness: a NATS operator, one trusted account and its user, as `nsc` would make them (JWTs
 * signed with NKeys), for a nats-server in operator mode (`operator`, `resolver: MEMORY`), and the
 * user's credentials file. `untrustedCreds` is a user signed by an account the server does not know.
 */
import { createHash } from 'node:crypto';

import { nkeys } from 'nats';

type KeyPair = ReturnType<typeof nkeys.createUser>;

function b64url(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString('base64url');
}

function signJwt(issuer: KeyPair, claims: Record<string, unknown>): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const body: Record<string, unknown> = { ...claims, iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey() };
  body['jti'] = createHash('sha256').update(JSON.stringify(body)).digest('base64url');
  const payload = b64url(JSON.stringify(body));
  return `${header}.${payload}.${b64url(issuer.sign(new TextEncoder().encode(`${header}.${payload}`)))}`;
}

const USER_CLAIMS = { type: 'user', version: 2, pub: {}, sub: {}, subs: -1, data: -1, payload: -1 };
const ACCOUNT_LIMITS = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

function credsFile(jwt: string, user: KeyPair): string {
  return [
    '-----BEGIN NATS USER JWT-----',
    jwt,
    '------END NATS USER JWT------',
    '',
    '-----BEGIN USER NKEY SEED-----',
    new TextDecoder().decode(user.getSeed()),
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
}

export interface NatsOperatorFixture {
  /** nats-server configuration lines (operator, memory resolver with the account preloaded). */
  serverConfig: string;
  /** Credentials file text of a user of the trusted account. */
  creds: string;
  /** Credentials file text of a user signed by an account the server does not trust. */
  untrustedCreds: string;
}

export function natsOperatorFixture(): NatsOperatorFixture {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  const stranger = nkeys.createAccount();
  const user = nkeys.createUser();
  const operatorJwt = signJwt(operator, { sub: operator.getPublicKey(), name: 'tidepool-test', nats: { type: 'operator', version: 2 } });
  const accountJwt = signJwt(operator, { sub: account.getPublicKey(), name: 'tidepool', nats: { type: 'account', version: 2, limits: ACCOUNT_LIMITS } });
  const userJwt = signJwt(account, { sub: user.getPublicKey(), name: 'service', nats: USER_CLAIMS });
  const strangerJwt = signJwt(stranger, { sub: user.getPublicKey(), name: 'service', nats: USER_CLAIMS });
  return {
    serverConfig: `operator: ${operatorJwt}\nresolver: MEMORY\nresolver_preload: {\n  ${account.getPublicKey()}: ${accountJwt}\n}\n`,
    creds: credsFile(userJwt, user),
    untrustedCreds: credsFile(strangerJwt, user),
  };
}
