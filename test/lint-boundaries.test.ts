/**
 * The import-boundary lint (eslint.config.js) proved on code it must reject: a lint rule that
 * silently stopped matching (a renamed folder, a resolver that no longer loads) would pass
 * `npm run check` on a clean tree forever. Each case lints a small module placed, by its path, in
 * an engine folder, and checks which rule reports it.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/** The data flow's layering: each folder may import those before it, never those after. */
const CHAIN = ['chain', 'dex', 'scanner', 'cache', 'quote', 'quote-grpc', 'aggregator'] as const;

const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname });

/** The rule ids reported for `source`, linted as if it were the file `filePath`. */
async function reportedRules(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

function importing(specifier: string): string {
  return `import * as dependency from '${specifier}';\nexport const used = dependency;\n`;
}

describe('import-boundary lint', () => {
  it('lets each folder of the chain import the one before it through its index.ts', async () => {
    for (let i = 1; i < CHAIN.length; i++) {
      const rules = await reportedRules(`engine/${CHAIN[i]}/boundary-probe.ts`, importing(`../${CHAIN[i - 1]}/index.js`));
      expect(rules, `${CHAIN[i]} → ${CHAIN[i - 1]}`).toEqual([]);
    }
  });

  it('reports every import up the chain (a folder importing one after it)', async () => {
    for (let i = 0; i < CHAIN.length; i++) {
      for (let j = i + 1; j < CHAIN.length; j++) {
        const rules = await reportedRules(`engine/${CHAIN[i]}/boundary-probe.ts`, importing(`../${CHAIN[j]}/index.js`));
        expect(rules, `${CHAIN[i]} → ${CHAIN[j]}`).toContain('boundaries/element-types');
      }
    }
  });

  it('keeps the platform services apart: they share messages, state and trading, never each other', async () => {
    const allowed: [string, string][] = [
      ['executor', 'messages'], ['executor', 'state'], ['executor', 'trading'], ['executor', 'wallets'],
      ['planner', 'messages'], ['planner', 'trading'], ['planner', 'market'], ['market', 'messages'],
      ['trading', 'messages'], ['backtest', 'planner'], ['backtest', 'executor'],
    ];
    for (const [from, to] of allowed) {
      expect(await reportedRules(`engine/${from}/boundary-probe.ts`, importing(`../${to}/index.js`)), `${from} → ${to}`).toEqual([]);
    }
    const refused: [string, string][] = [
      ['executor', 'planner'], ['executor', 'market'], ['planner', 'executor'], ['market', 'planner'],
      ['messages', 'planner'], ['messages', 'executor'], ['messages', 'state'], ['trading', 'planner'],
      ['state', 'executor'], ['wallets', 'executor'], ['rpc-proxy', 'executor'], ['quote', 'state'],
    ];
    for (const [from, to] of refused) {
      expect(await reportedRules(`engine/${from}/boundary-probe.ts`, importing(`../${to}/index.js`)), `${from} → ${to}`).toContain('boundaries/element-types');
    }
  });

  it('keeps the quote core free of its transports, and the transports of each other', async () => {
    for (const [from, to] of [['quote', 'quote-http'], ['quote', 'quote-grpc'], ['quote', 'quote-service'], ['quote-http', 'quote-grpc'], ['quote-grpc', 'quote-http'], ['quote-http', 'quote-service']]) {
      expect(await reportedRules(`engine/${from}/boundary-probe.ts`, importing(`../${to}/index.js`)), `${from} → ${to}`).toContain('boundaries/element-types');
    }
    for (const to of ['quote', 'quote-http', 'quote-grpc']) {
      expect(await reportedRules('engine/quote-service/boundary-probe.ts', importing(`../${to}/index.js`)), `quote-service → ${to}`).toEqual([]);
    }
  });

  it('reports an executor reaching into a planner file, past every index', async () => {
    const rules = await reportedRules('engine/executor/boundary-probe.ts', importing('../planner/arbitrage-planner.js'));
    expect(rules).toContain('boundaries/element-types');
    expect(rules).toContain('boundaries/entry-point');
  });

  it('reports an import of another folder that bypasses its index.ts', async () => {
    const rules = await reportedRules('engine/quote/boundary-probe.ts', importing('../cache/pool-cache.js'));
    expect(rules).toEqual(['boundaries/entry-point']);
  });

  it('reports runtime code importing a test helper, and lets a test do it', async () => {
    expect(await reportedRules('engine/sim/boundary-probe.ts', importing('./testing/chain-fixtures.js'))).toEqual(['no-restricted-imports']);
    expect(await reportedRules('engine/quote/boundary-probe.ts', importing('./testing.js'))).toEqual(['no-restricted-imports']);
    expect(await reportedRules('engine/sim/boundary-probe.test.ts', importing('./testing/chain-fixtures.js'))).toEqual([]);
  });

  it('lets a folder import its own modules directly', async () => {
    expect(await reportedRules('engine/quote/boundary-probe.ts', importing('./quote-engine.js'))).toEqual([]);
  });
});
