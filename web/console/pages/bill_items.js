// One bill run on the Bills page: its facts and its items, filtered by outcome and paged by the
// API's keyset cursor ("More"); each payment links to its timeline, each discrepancy to the
// Discrepancies page.
import {api} from '../api.js';
import {el, clear, table, time, badge} from '../dom.js';
import {showError} from '../ui.js';

// The item outcomes of SPEC §13, in the API's order.
export const OUTCOMES = ['matched', 'repair', 'repaired', 'paid_after_cancel', 'repair_failed',
  'unknown_payment', 'amount_mismatch', 'trade_mismatch', 'duplicate_trade', 'missing_at_gateway',
  'refund_unknown_here', 'refund_missing_at_gateway'];
const ITEM_LIMIT = 100;
const ITEM_LIMIT_MAX = 1000;

export function money(cents) {
  if (cents === null || cents === undefined) return el('span', {class: 'muted'}, '—');
  return (Number(cents) / 100).toFixed(2);
}

// matched is good, a repair is the engine's own work (a failed one is bad), anything else is for a
// person.
export function outcomeBadge(outcome) {
  const tone = outcome === 'matched' ? 'good' : outcome === 'repair_failed' ? 'failed'
    : outcome === 'repaired' || outcome === 'repair' ? 'info' : 'kind';
  return badge(outcome, `outcome ${tone}`);
}

export function stateBadge(run) {
  return [badge(run.state, `state ${run.state}`),
          run.reason ? el('div', {class: 'reason'}, run.reason) : null];
}

// A payment number as a link to its timeline (a bill row may name only its trade: `trade:T`).
export function paymentLink(paymentNo, className) {
  if (!paymentNo || paymentNo.startsWith('trade:')) return paymentNo || '—';
  return el('a', {href: `#/timeline?paymentNo=${encodeURIComponent(paymentNo)}`, class: className},
            paymentNo);
}

const COLUMNS = [
  {label: 'Seq', cell: (i) => String(i.seq)},
  {label: 'Outcome', cell: (i) => outcomeBadge(i.outcome)},
  {label: 'Kind', cell: (i) => i.kind},
  {label: 'Payment', cell: (i) => paymentLink(i.paymentNo, 'payment-link')},
  {label: 'Trade', cell: (i) => [el('span', {class: 'mono'}, i.tradeNo || '—'),
    i.refundNo ? el('div', {class: 'muted'}, `refund ${i.refundNo}`) : null]},
  {label: 'Gateway', cell: (i) => money(i.gatewayAmountCents)},
  {label: 'Ours', cell: (i) => money(i.localAmountCents)},
  {label: 'Fee', cell: (i) => money(i.feeCents)},
  {label: 'Completed', cell: (i) => time(i.completedAt)},
  {label: 'Discrepancy', cell: (i) => (i.discrepancyId === null || i.discrepancyId === undefined ? '—'
    : el('a', {href: `#/discrepancies?focus=${encodeURIComponent(i.discrepancyId)}`,
               class: 'discrepancy-link'}, `#${i.discrepancyId}`))},
];

function runFacts(run) {
  const others = Object.entries(run.counts || {}).filter(([, n]) => n > 0);
  return el('dl', {class: 'facts'},
    el('dt', {}, 'State'), el('dd', {id: 'bill-run-state'}, stateBadge(run)),
    el('dt', {}, 'Rows'), el('dd', {}, String(run.rows)),
    el('dt', {}, 'Items'), el('dd', {}, others.length === 0 ? '—'
      : others.map(([outcome, n]) => el('span', {class: 'count'}, outcomeBadge(outcome), ` ${n}`))),
    el('dt', {}, 'Fees'), el('dd', {}, money(run.feesCents)),
    el('dt', {}, 'Bill SHA-256'), el('dd', {class: 'mono'}, run.billSha256 ?? '—'),
    el('dt', {}, 'Started'), el('dd', {}, time(run.startedAt)),
    el('dt', {}, 'Finished'), el('dd', {}, time(run.finishedAt)));
}

// The run `runId` and its items of `outcome` ('' = all) into `holder`; `hashOf({outcome})` is the
// page's address with another outcome.
export async function showItems(holder, runId, outcome, pageSize, hashOf) {
  clear(holder).append(el('p', {class: 'muted'}, 'Loading the run…'));
  const run = await api('GET', `/api/bill-runs/${encodeURIComponent(runId)}`);
  const filter = el('select', {id: 'f-bill-outcome', name: 'outcome',
                               onchange: () => { window.location.hash = hashOf({outcome: filter.value}); }},
    ['', ...OUTCOMES].map((o) => el('option', {value: o, selected: o === outcome}, o || 'any')));
  const list = el('div', {id: 'bill-item-list'});
  const limit = Math.min(ITEM_LIMIT_MAX, Math.max(1, Number(pageSize) || ITEM_LIMIT));
  clear(holder).append(el('div', {class: 'card'},
    el('h3', {}, `Run ${run.id} · ${run.channel} · ${run.date}`),
    runFacts(run),
    el('div', {class: 'search inline filter'}, el('label', {}, 'Outcome', filter)),
    list));
  await itemPage(list, run.id, {outcome, limit});
}

async function itemPage(list, runId, query) {
  const page = await api('GET', `/api/bill-runs/${encodeURIComponent(runId)}/items`, {query});
  list.querySelector('.more')?.remove();
  const body = list.querySelector('tbody');
  const rendered = table(COLUMNS, page.items, query.cursor ? 'No more items.'
    : `No ${query.outcome ? `${query.outcome} ` : ''}items in this run.`);
  if (body && page.items.length) body.append(...rendered.querySelectorAll('tbody tr'));
  else if (!body) list.append(rendered);
  if (page.nextCursor) {
    list.append(el('button', {type: 'button', class: 'more', id: 'bill-items-more', onclick: () =>
      itemPage(list, runId, {...query, cursor: page.nextCursor}).catch(showError)}, 'More'));
  }
}
