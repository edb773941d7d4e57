export { AUTH_KEYS, AUTH_MODES, authEnabled, authIssues, authSchema, DEFAULT_AUTH_SETTINGS, isLoopbackHost, MIN_SECRET_BYTES, type AuthMode, type AuthSettings } from './auth-config.js';
export { bearerToken, createGrpcAuth, guardStream, guardUnary, setBearerToken, verifiedCallSubject, type GrpcAuth } from './grpc-auth.js';
export { AuthError } from './auth-error.js';
export { CACHE_MAX_TOKENS, CACHE_TTL_MS, CLOCK_TOLERANCE_S, JwtVerifier, readPublicKeyFile, verifierFromSettings, type JwtVerifierOptions } from './jwt-verifier.js';
export { bearerTokenOfHeader, createHttpAuth, type HttpAuthorizer } from './http-auth.js';
