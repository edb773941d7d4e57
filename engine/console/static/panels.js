// Rendering of each panel from the console state (pure DOM, no framework).
import { ageText, atoms, el, mintName, short, timeText } from './format.js';

// The panel's own table (a uPlot legend is a table too).
const body = (id) => document.querySelector(`#${id} > table > tbody`);
const empty = (id, text) => {
  const p = document.querySelector(`#${id} .empty`);
  if (p) {
    p.textContent = text;
    p.hidden = text === '';
  }
};

export function renderServices(services) {
  const rows = services.map((s) => {
    const ready = s.ready ? el('td', { class: `state ${s.ready.state}`, 'data-state': s.ready.state, text: `${s.ready.state} (${s.ready.status || 'no answer'})` }) : el('td', { class: 'muted', text: 'no /ready' });
    return el(
      'tr',
      { 'data-service': s.name },
      el('td', { text: s.name }),
      el('td', { class: `state health ${s.health.state}`, 'data-state': s.health.state, text: `${s.health.state} (${s.health.status || 'no answer'})` }),
      ready,
      el('td', { class: 'muted', text: s.health.detail }),
      el('td', { class: 'muted', text: `${s.health.latencyMs} ms` }),
    );
  });
  body('services').replaceChildren(...rows);
}

/** Pools matching the filter text (DEX, symbol, mint or address) and the stale-only box. */
export function filterPools(pools, text, staleOnly) {
  const words = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return pools.filter((p) => {
    if (staleOnly && p.fresh) return false;
    const hay = [p.address, p.dex, p.tokenA, p.tokenB, mintName(p.tokenA), mintName(p.tokenB)].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export function renderPools(pools, filterText, staleOnly) {
  const shown = filterPools(pools, filterText, staleOnly);
  const fresh = pools.filter((p) => p.fresh).length;
  document.getElementById('pool-counts').textContent = `${pools.length} monitored · ${fresh} fresh · ${pools.length - fresh} stale · ${shown.length} shown`;
  const rows = shown.map((p) =>
    el(
      'tr',
      { 'data-pool': p.address, class: p.fresh ? 'fresh' : 'stale' },
      el('td', { title: p.address, text: short(p.address) }),
      el('td', { text: p.dex || '–' }),
      el('td', { title: `${p.tokenA} / ${p.tokenB}`, text: `${mintName(p.tokenA)} / ${mintName(p.tokenB)}` }),
      el('td', { class: 'num reserve-a', text: atoms(p.reserveA) }),
      el('td', { class: 'num reserve-b', text: atoms(p.reserveB) }),
      el('td', { class: 'num', text: atoms(p.liquidity) }),
      el('td', { class: 'num slot', text: p.slot ?? '–' }),
      el('td', { class: 'num age', text: ageText(p.ageMs) }),
      el('td', { class: `badge ${p.fresh ? 'up' : 'down'}`, text: p.fresh ? 'fresh' : p.slot === null ? 'no state' : 'stale' }),
    ),
  );
  body('pools').replaceChildren(...rows);
  // The quote box offers every mint of the pools.
  const mints = [...new Set(pools.flatMap((p) => [p.tokenA, p.tokenB]).filter(Boolean))];
  document.getElementById('mints').replaceChildren(...mints.map((m) => el('option', { value: m, text: mintName(m) })));
}

export function renderQuote(result) {
  const box = document.getElementById('quote-result');
  if (result.error) {
    box.className = 'error';
    box.replaceChildren(el('span', { id: 'quote-error', text: `${result.status} ${result.error.code}: ${result.error.message}` }));
    return;
  }
  const q = result.quote;
  box.className = '';
  const route = (q.route ?? []).map((h, i) =>
    el('tr', {}, el('td', { text: String(i + 1) }), el('td', { text: h.dex }), el('td', { title: h.pool, text: short(h.pool) }), el('td', { text: `${mintName(h.inputMint)} → ${mintName(h.outputMint)}` }), el('td', { class: 'num', text: atoms(h.inAmount) }), el('td', { class: 'num', text: atoms(h.outAmount) })),
  );
  box.replaceChildren(
    el(
      'dl',
      {},
      el('dt', { text: 'input' }), el('dd', { id: 'quote-in-amount', 'data-value': q.inputAmount, text: `${atoms(q.inputAmount)} ${mintName(q.inputMint)}` }),
      el('dt', { text: 'output' }), el('dd', { id: 'quote-out-amount', 'data-value': q.outputAmount, text: `${atoms(q.outputAmount)} ${mintName(q.outputMint)}` }),
      el('dt', { text: 'price impact' }), el('dd', { text: String(q.priceImpact) }),
      el('dt', { text: q.swapMode === 'ExactOut' ? 'max input' : 'min output' }), el('dd', { text: atoms(q.swapMode === 'ExactOut' ? q.maxInputAmount : q.minOutputAmount) }),
      el('dt', { text: 'freshness' }), el('dd', { id: 'quote-freshness', text: `state ${ageText(q.stateAgeMs)} old, slot ${q.slot} (context ${q.contextSlot}), from ${q.source}` }),
    ),
    el('table', {}, el('thead', {}, el('tr', {}, ...['hop', 'DEX', 'pool', 'pair', 'in', 'out'].map((h) => el('th', { text: h })))), el('tbody', {}, ...route)),
  );
}

export function renderOpportunities(opportunities, feed) {
  const feedText = feed === 'off' ? 'no bus configured (BUS_ENABLED / BUS_SERVERS)' : `TRADE_OPPORTUNITIES: ${feed.replace(/_/g, ' ')}`;
  document.getElementById('opportunity-feed').textContent = `(${feedText})`;
  body('opportunities').replaceChildren(
    ...opportunities.map((o) =>
      el('tr', { 'data-seq': String(o.seq) }, el('td', { text: timeText(o.receivedAt) }), el('td', { text: o.subject }), el('td', { text: o.strategy ?? '–' }), el('td', { class: 'num', text: atoms(o.expectedProfit) }), el('td', { class: 'json', text: JSON.stringify(o.body).slice(0, 200) })),
    ),
  );
  empty('opportunities', opportunities.length > 0 ? '' : 'No opportunities published yet: the planners publish them to TRADE_OPPORTUNITIES (trade.opportunities.>).');
}

export function renderTrades(platform) {
  body('trades').replaceChildren(
    ...platform.trades.map((t) =>
      el('tr', { class: `trade ${t.status}` }, el('td', { text: timeText(t.createdAt) }), el('td', { text: t.strategy ?? '–' }), el('td', { class: `status ${t.status}`, text: t.status ?? '–' }), el('td', { class: 'num', text: atoms(t.expectedProfit) }), el('td', { class: 'num', text: atoms(t.actualProfit) }), el('td', { title: t.signature ?? '', text: short(t.signature) }), el('td', { class: 'error', text: t.error ?? '' })),
    ),
  );
  empty('trades', !platform.database ? 'No database: trades are read from the trades table of PostgreSQL (DATABASE_URL, or the embedded one of npm start once it opens).' : platform.trades.length === 0 ? 'No trades yet: the executors record every attempt in the trades table.' : '');
}

export function renderWallets(platform) {
  const tiers = ['treasure', 'controller', 'proxy', 'worker'];
  const groups = tiers
    .map((tier) => [tier, platform.wallets.filter((w) => w.tier === tier)])
    .filter(([, ws]) => ws.length > 0)
    .map(([tier, ws]) =>
      el(
        'div',
        { class: 'tier', 'data-tier': tier },
        el('h3', { text: `${tier} (${ws.length})` }),
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, ...['wallet', 'token', 'expected', 'actual', 'source', 'last sync'].map((h) => el('th', { text: h })))),
          el(
            'tbody',
            {},
            ...ws.flatMap((w) =>
              (w.balances.length > 0 ? w.balances : [{ token: '–', expected: null, actual: null, source: 'table', outOfBand: false }]).map((b) =>
                el('tr', { class: b.outOfBand ? 'low' : '' }, el('td', { title: w.address, text: short(w.address) + (w.enabled ? '' : ' (disabled)') }), el('td', { text: mintName(b.token === 'SOL' ? 'So11111111111111111111111111111111111111112' : b.token) }), el('td', { class: 'num', text: atoms(b.expected) }), el('td', { class: 'num', text: atoms(b.actual) }), el('td', { class: 'muted', text: b.source }), el('td', { text: timeText(w.lastSync) })),
              ),
            ),
          ),
        ),
      ),
    );
  document.getElementById('wallet-tiers').replaceChildren(...groups);
  document.querySelector('#transfers > tbody').replaceChildren(
    ...platform.transfers.map((t) => el('tr', {}, el('td', { text: timeText(t.createdAt) }), el('td', { text: t.reason }), el('td', { text: short(t.from) }), el('td', { text: short(t.to) }), el('td', { text: mintName(t.token) }), el('td', { class: 'num', text: atoms(t.amount) }), el('td', { text: t.status }))),
  );
  empty(
    'wallets',
    !platform.database
      ? 'No database: wallets are read from the wallets table.'
      : platform.wallets.length === 0
        ? 'No wallets yet: tidepool wallets create --tier worker'
        : platform.transfers.length === 0
          ? 'No rebalancing transfers yet (tidepool wallets rebalance).'
          : '',
  );
}

export function renderPaper(platform) {
  body('paper').replaceChildren(
    ...platform.paper.trades.map((t) => el('tr', {}, el('td', { text: timeText(t.createdAt) }), el('td', { text: t.strategy ?? '–' }), el('td', { class: 'num', text: atoms(t.expectedProfit) }), el('td', { class: 'num', text: atoms(t.actualProfit ?? t.expectedProfit) }))),
  );
  empty('paper', platform.paper.trades.length > 0 ? '' : 'No paper trades yet: paper trading and backtests record trades with status "paper" once the executors exist; their profit and loss is charted here.');
}
