// The console page: one WebSocket for the live state (snapshot, then changes), the quote box over
// /api/quote, uPlot charts. Plain ES modules, served as they are.
import uPlot from '/vendor/uplot/uPlot.esm.js';
import { ageText } from './format.js';
import { renderOpportunities, renderPaper, renderPools, renderQuote, renderServices, renderTrades, renderWallets } from './panels.js';
import { renderStrategies } from './strategies.js';

const state = { services: [], pools: [], latency: [], opportunities: [], opportunityFeed: 'off', platform: { database: false, trades: [], paper: { trades: [], pnl: [] }, wallets: [], transfers: [], errors: [] } };
const TOKEN_KEY = 'tidepool.console.token';
let token = sessionStorage.getItem(TOKEN_KEY) ?? '';

// --- charts -----------------------------------------------------------------------------------
function chart(id, series, width = 520) {
  const opts = {
    width,
    height: 200,
    scales: { x: { time: true } },
    series: [{}, ...series.map(([label, stroke]) => ({ label, stroke, width: 1.5, spanGaps: false }))],
    axes: [{}, { size: 60 }],
  };
  return new uPlot(opts, [[], ...series.map(() => [])], document.getElementById(id));
}
const charts = {
  quote: chart('chart-quote', [['p50', '#2b7bb9'], ['p99', '#d9534f']]),
  stream: chart('chart-stream', [['p50', '#2b7bb9'], ['p99', '#d9534f']]),
  pnl: chart('chart-pnl', [['cumulative profit (atoms)', '#3c9a5f']], 1060),
};

function drawLatency() {
  const t = state.latency.map((p) => p.t / 1000);
  charts.quote.setData([t, state.latency.map((p) => p.quoteP50), state.latency.map((p) => p.quoteP99)]);
  charts.stream.setData([t, state.latency.map((p) => p.streamP50), state.latency.map((p) => p.streamP99)]);
}

function drawPnl() {
  const pnl = state.platform.paper.pnl;
  charts.pnl.setData([pnl.map((p) => p.t / 1000), pnl.map((p) => p.cumulative)]);
}

// --- panels -----------------------------------------------------------------------------------
const poolFilter = document.getElementById('pool-filter');
const staleOnly = document.getElementById('pool-stale-only');
const drawPools = () => renderPools(state.pools, poolFilter.value, staleOnly.checked);
// The server sends the table when a pool changes, not as it ages: the page ages the rows from the
// ages it was sent and the time since.
let poolsReceivedAt = Date.now();
setInterval(() => {
  const elapsed = Date.now() - poolsReceivedAt;
  const byAddress = new Map(state.pools.map((p) => [p.address, p]));
  for (const cell of document.querySelectorAll('#pools tr[data-pool] td.age')) {
    const p = byAddress.get(cell.parentElement.dataset.pool);
    if (p && p.ageMs !== null) cell.textContent = ageText(p.ageMs + elapsed);
  }
}, 500);
poolFilter.addEventListener('input', drawPools);
staleOnly.addEventListener('change', drawPools);

function drawPlatform() {
  renderTrades(state.platform);
  renderWallets(state.platform);
  renderPaper(state.platform);
  drawPnl();
}

function drawAll() {
  renderServices(state.services);
  drawPools();
  drawLatency();
  renderOpportunities(state.opportunities, state.opportunityFeed);
  drawPlatform();
}

function apply(message) {
  switch (message.type) {
    case 'snapshot':
      Object.assign(state, message.state);
      poolsReceivedAt = Date.now();
      drawAll();
      break;
    case 'services':
      state.services = message.services;
      renderServices(state.services);
      break;
    case 'pools':
      state.pools = message.pools;
      poolsReceivedAt = Date.now();
      drawPools();
      break;
    case 'latency': {
      state.latency.push(message.point);
      const cutoff = message.point.t - 600_000;
      while (state.latency.length > 0 && state.latency[0].t < cutoff) state.latency.shift();
      drawLatency();
      break;
    }
    case 'opportunity':
      state.opportunities.unshift(message.opportunity);
      state.opportunities.length = Math.min(state.opportunities.length, 200);
      state.opportunityFeed = message.feed;
      renderOpportunities(state.opportunities, state.opportunityFeed);
      break;
    case 'platform':
      state.platform = message.platform;
      drawPlatform();
      break;
  }
}

// --- live connection --------------------------------------------------------------------------
const connection = document.getElementById('connection');
function setConnection(s, text) {
  connection.dataset.state = s;
  connection.className = `badge ${s === 'live' ? 'up' : 'down'}`;
  connection.textContent = text;
}

let retryMs = 500;
function connect() {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
  const ws = token ? new WebSocket(url, ['tidepool.bearer', token]) : new WebSocket(url);
  ws.onopen = () => {
    retryMs = 500;
    setConnection('live', 'live');
  };
  ws.onmessage = (e) => apply(JSON.parse(e.data));
  ws.onclose = async () => {
    setConnection('down', 'reconnecting…');
    if (await needsToken()) return;
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5_000);
  };
}

function headers() {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** True (and the sign-in form shown) when the console wants a token we do not have or that failed. */
async function needsToken() {
  try {
    const res = await fetch('/api/state', { headers: headers() });
    if (res.status !== 401) return false;
    const body = await res.json().catch(() => ({}));
    document.getElementById('auth').hidden = false;
    document.getElementById('auth-error').textContent = body?.error?.message ?? 'sign in';
    setConnection('down', 'signed out');
    return true;
  } catch {
    return false;
  }
}

document.getElementById('auth').addEventListener('submit', (e) => {
  e.preventDefault();
  token = document.getElementById('auth-token').value.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  document.getElementById('auth').hidden = true;
  connect();
  watchStrategies();
});

// --- quote box --------------------------------------------------------------------------------
document.getElementById('quote-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const q = new URLSearchParams({
    input: document.getElementById('quote-input').value.trim(),
    output: document.getElementById('quote-output-mint').value.trim(),
    amount: document.getElementById('quote-amount').value.trim(),
    swapMode: document.getElementById('quote-mode').value,
  });
  const box = document.getElementById('quote-result');
  box.dataset.state = 'pending';
  try {
    const res = await fetch(`/api/quote?${q}`, { headers: headers() });
    const body = await res.json();
    renderQuote(res.ok ? { quote: body } : { status: res.status, error: body.error ?? { code: String(res.status), message: 'no answer' } });
  } catch (err) {
    renderQuote({ status: 0, error: { code: 'network', message: String(err) } });
  }
  box.dataset.state = 'done';
});

// --- strategies (the planner's API, through /api/strategies) ----------------------------------
async function loadStrategies() {
  try {
    const res = await fetch('/api/strategies', { headers: headers() });
    const body = await res.json().catch(() => ({}));
    renderStrategies(res.ok ? body : { status: res.status, error: body.error ?? { code: String(res.status), message: 'no answer' } }, toggleStrategy);
  } catch (err) {
    renderStrategies({ status: 0, error: { code: 'network', message: String(err) } }, toggleStrategy);
  }
}

async function toggleStrategy(strategy, button) {
  button.disabled = true;
  try {
    const res = await fetch(`/api/strategies/${encodeURIComponent(strategy.id)}`, { method: 'PATCH', headers: { ...headers(), 'content-type': 'application/json' }, body: JSON.stringify({ enabled: !strategy.enabled }) });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      renderStrategies({ status: res.status, error: body.error ?? { code: String(res.status), message: 'no answer' } }, toggleStrategy);
      return;
    }
  } finally {
    button.disabled = false;
  }
  await loadStrategies();
}

let strategiesTimer;
function watchStrategies() {
  void loadStrategies();
  strategiesTimer ??= setInterval(loadStrategies, 2_000);
}

if (!(await needsToken())) {
  connect();
  watchStrategies();
}
