// The strategies view: the planner's GET /strategies (through the console's /api/strategies) as a
// table, each strategy with its status, open grid orders, position, unrealized P&L and the realized
// P&L of its trades (engine/planner/strategy-pnl.ts), and a
// pause / resume button (PATCH /api/strategies/{id}). Every string goes in as text (el's `text`).
import { atoms, el, mintName, short, timeText } from './format.js';

const ORDERS_LISTED = 5;

function ordersCell(s) {
  const open = s.openOrders ?? [];
  const counts = Object.entries(s.orders ?? {}).map(([status, n]) => `${status} ${n}`).join(' · ');
  const lines = open.slice(0, ORDERS_LISTED).map((o) => el('div', { class: 'order', 'data-order': o.id, 'data-status': o.status, text: `${o.side ? `${o.side} ` : ''}@${o.priceLevel} ${o.status} ${atoms(o.filled)}/${atoms(o.amount)}` }));
  if (open.length > ORDERS_LISTED) lines.push(el('div', { class: 'muted', text: `… ${open.length - ORDERS_LISTED} more` }));
  return el('td', { class: 'orders', 'data-open': String(open.length) }, el('div', { class: 'muted', text: counts === '' ? (s.strategyType === 'grid' ? 'no orders yet' : '–') : counts }), ...lines);
}

function positionCells(p) {
  if (!p) return [el('td', { class: 'num position', text: '–' }), el('td', { class: 'num cost', text: '–' }), el('td', { class: 'num pnl', text: '–' })];
  const pnl = p.unrealizedPnl;
  const sign = pnl === undefined ? '' : pnl.startsWith('-') ? 'down' : 'up';
  return [
    el('td', { class: 'num position', title: p.token, text: `${atoms(p.held)} ${mintName(p.token)}` }),
    el('td', { class: 'num cost', text: atoms(p.cost) }),
    el('td', { class: `num pnl ${sign}`, title: p.markPrice === undefined ? 'no current price' : `value ${p.value} at ${p.markPrice}`, text: pnl === undefined ? '–' : atoms(pnl) }),
  ];
}

/** Realized P&L of the strategy's trades; its title: the mint, position, fills, fees and tips. */
function realizedCell(p) {
  if (!p) return el('td', { class: 'num realized', text: '–' });
  const sign = p.realizedPnl === '0' ? '' : p.realizedPnl.startsWith('-') ? 'down' : 'up';
  const title = `${p.fills} fill(s)${p.mint ? ` · in ${p.mint}` : ''} · position ${p.position}, cost ${p.costBasis} · fees ${p.fees} lamports${p.tips !== '0' ? `, tips ${p.tips}` : ''}`;
  return el('td', { class: `num realized ${sign}`, 'data-fills': String(p.fills), title, text: p.fills === 0 ? '–' : `${atoms(p.realizedPnl)}${p.mint ? ` ${mintName(p.mint)}` : ''}` });
}

/** Renders the strategies; `onToggle(strategy)` is called by a row's pause / resume button. */
export function renderStrategies(answer, onToggle) {
  const tbody = document.querySelector('#strategies > table > tbody');
  const note = document.querySelector('#strategies .empty');
  const status = document.getElementById('strategies-status');
  if (answer.error) {
    tbody.replaceChildren();
    note.hidden = false;
    note.textContent = `${answer.status} ${answer.error.code}: ${answer.error.message}`;
    status.textContent = '';
    return;
  }
  const strategies = answer.strategies ?? [];
  status.textContent = `(${strategies.length} · ${strategies.filter((s) => s.enabled).length} enabled)`;
  tbody.replaceChildren(
    ...strategies.map((s) => {
      const button = el('button', { type: 'button', class: 'toggle', 'data-action': s.enabled ? 'pause' : 'resume', text: s.enabled ? 'pause' : 'resume' });
      button.addEventListener('click', () => onToggle(s, button));
      return el(
        'tr',
        { 'data-strategy': s.id, 'data-status': s.status, class: s.enabled ? '' : 'paused' },
        el('td', { title: s.id, text: short(s.id) }),
        el('td', { text: s.strategyType }),
        el('td', { class: `state ${s.enabled ? 'up' : 'degraded'}`, title: s.running === false && s.enabled ? 'enabled, run by a planner started for its type (not the one the console asks)' : '', text: s.status + (s.running === false && s.enabled ? ' (other planner)' : '') }),
        ordersCell(s),
        ...positionCells(s.position),
        realizedCell(s.pnl),
        el('td', { text: timeText(s.lastRun ? Date.parse(s.lastRun) : null) }),
        el('td', { class: 'json params', text: JSON.stringify(s.parameters) }),
        el('td', {}, button),
      );
    }),
  );
  note.hidden = strategies.length > 0;
  note.textContent = strategies.length > 0 ? '' : 'No strategies: add one with tidepool strategies add, or POST /strategies on the planner.';
}
