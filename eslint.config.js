// Lint for the whole tree: typescript-eslint's recommended rules, and the architecture as rules.
//
// Layering (docs/architecture.md): each engine folder may import only the folders listed for it
// below, always through that folder's public entry (index.ts); imports point down the data flow
// (chain → dex → scanner → cache → quote → aggregator → the platform's services), never back up. Tests and
// benchmarks may reach any module; runtime code never imports a test helper (testing/, testing.ts).
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

/** Engine folders and what each may import (besides itself and the root leaves errors/prng/proto). */
const LAYERS = {
  config: [],
  obs: [],
  threads: [],
  common: ['chain', 'obs', 'config'],
  chain: [],
  dex: ['chain'],
  // Flash loans of a lending protocol: instructions and accounts, beside the DEX protocols.
  lending: ['chain'],
  rpc: ['threads', 'obs', 'config', 'chain'],
  pools: ['dex', 'rpc', 'chain'],
  scanner: ['chain', 'dex', 'rpc', 'pools', 'threads', 'obs', 'config', 'common'],
  cache: ['chain', 'dex', 'pools', 'scanner'],
  bus: ['chain', 'scanner', 'pools', 'obs', 'config', 'common'],
  auth: ['config', 'obs'],
  quote: ['chain', 'dex', 'rpc', 'pools', 'cache', 'auth', 'obs', 'config', 'common', 'swap-api'],
  // The quote core's two transports, and the service that assembles core and transports.
  'quote-http': ['chain', 'dex', 'cache', 'quote', 'auth', 'obs', 'config', 'common', 'swap-api'],
  'quote-grpc': ['chain', 'dex', 'cache', 'quote', 'auth', 'obs', 'config', 'common'],
  'quote-service': ['chain', 'dex', 'rpc', 'pools', 'cache', 'quote', 'quote-http', 'quote-grpc', 'swap-builder', 'swap-api', 'auth', 'obs', 'config', 'common'],
  external: ['chain', 'cache', 'quote', 'quote-grpc', 'auth', 'obs', 'config', 'common'],
  aggregator: ['chain', 'quote', 'quote-grpc', 'bus', 'auth', 'obs', 'config', 'common'],
  'swap-api': ['chain', 'dex'],
  // Ready-to-sign swaps from the swap API's quotes: the route's pools read again, re-quoted, built.
  'swap-builder': ['chain', 'dex', 'pools', 'rpc', 'swap-api'],
  sim: ['chain', 'dex', 'lending', 'obs', 'config', 'threads', 'common', 'swap-api'],
  // The platform (spec 03), one folder per service or shared concept. The messages that cross the
  // bus have one home both sides import; state (db + kv) and trading (the pool view and route
  // arithmetic) are shared below the services; no service reaches into another service's folder,
  // except the backtest, which replays the planners and the executor's fill by design.
  messages: ['chain', 'dex', 'lending'],
  state: ['chain', 'obs', 'config', 'common', 'quote'],
  trading: ['chain', 'dex', 'lending', 'pools', 'cache', 'messages'],
  wallets: ['chain', 'rpc', 'obs', 'config', 'state'],
  'rpc-proxy': ['chain', 'rpc', 'obs', 'config', 'common', 'auth'],
  market: ['chain', 'dex', 'rpc', 'pools', 'scanner', 'obs', 'config', 'common', 'messages', 'state', 'rpc-proxy'],
  planner: ['chain', 'dex', 'lending', 'rpc', 'pools', 'cache', 'obs', 'config', 'common', 'messages', 'state', 'trading', 'market', 'wallets'],
  executor: ['chain', 'dex', 'lending', 'rpc', 'pools', 'scanner', 'cache', 'obs', 'config', 'common', 'messages', 'state', 'trading', 'wallets'],
  // Signal sources: market events in, TradeSignals out (the built-in model, a user's model).
  signals: ['obs', 'config', 'common', 'messages'],
  backtest: ['chain', 'dex', 'pools', 'cache', 'bus', 'obs', 'messages', 'state', 'trading', 'market', 'planner', 'executor', 'signals'],
  'config-validator': ['chain', 'rpc', 'bus', 'obs', 'config', 'state', 'wallets'],
  // The web console sits on top of the platform: it reads every layer's state, none reads it.
  console: ['chain', 'dex', 'rpc', 'pools', 'scanner', 'cache', 'bus', 'quote', 'quote-http', 'quote-grpc', 'quote-service', 'swap-builder', 'aggregator', 'auth', 'obs', 'config', 'common', 'messages', 'state', 'trading', 'wallets', 'rpc-proxy', 'market', 'planner', 'executor', 'signals', 'backtest', 'config-validator'],
};
const ALL = Object.keys(LAYERS);
const FOLDERS = [...ALL, 'app', 'cli'];

export default tseslint.config(
  { ignores: ['dist/', 'dist-bench/', 'build/', 'node_modules/', 'engine/aggregator/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { console: 'readonly', process: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-undef': 'off', // TypeScript checks names
    },
  },
  {
    // The console's page: plain browser ES modules, no TypeScript to catch an undefined name.
    files: ['engine/console/static/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(['document', 'window', 'location', 'sessionStorage', 'WebSocket', 'fetch', 'URLSearchParams', 'Node', 'setTimeout', 'setInterval', 'console'].map((g) => [g, 'readonly'])),
    },
    rules: { 'no-undef': 'error' },
  },
  {
    // Tests read arbitrary JSON answers; `any` there is a reading aid, not a hole in runtime types.
    files: ['**/*.test.ts', '**/testing/**', '**/testing.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['engine/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing/**', '**/testing.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: './tsconfig.json' } },
      'boundaries/include': ['engine/**/*.ts'],
      'boundaries/elements': [
        ...FOLDERS.map((name) => ({ type: name, pattern: `engine/${name}`, mode: 'folder' })),
        { type: 'root', pattern: 'engine/*.ts', mode: 'file' },
      ],
    },
    rules: {
      'boundaries/element-types': ['error', {
        default: 'disallow',
        rules: [
          ...ALL.map((name) => ({ from: name, allow: ['root', ...LAYERS[name]] })),
          { from: 'app', allow: ['root', ...ALL] },
          { from: 'cli', allow: ['root', ...ALL, 'app'] },
          { from: 'root', allow: ['root'] },
        ],
      }],
      'boundaries/entry-point': ['error', {
        default: 'disallow',
        rules: [
          { target: FOLDERS, allow: 'index.ts' },
          { target: ['root'], allow: '*.ts' },
          // Light entry points: one small file each, for users that must not load the module's index
          // (the quote HTTP path: engine/rpc's loads undici and a worker thread, engine/auth's jose
          // and gRPC; engine/quote README, "Where the RSS goes"). Each imports nothing heavy.
          { target: ['rpc'], allow: 'abortable.ts' },
          { target: ['pools'], allow: 'reserves.ts' },
          { target: ['auth'], allow: 'auth-error.ts' },
        ],
      }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/testing/**', '**/testing.js'], message: 'test helpers are for tests and benchmarks, not runtime code' }] }],
    },
  },
);
