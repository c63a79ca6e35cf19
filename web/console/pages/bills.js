// The Bills page (SPEC §13): bill runs by day for a channel and a date range, drawn as a chart of
// matched / repaired / discrepancy items, the runs' table, one run's items (?run=ID), and a form
// that starts a run of a channel's bill for a day. Address: #/bills?channel=&from=&to=&run=&outcome=
// (&pageSize= the items per page).
import {api} from '../api.js';
import {el, clear, append, table, time, badge} from '../dom.js';
import {confirmAction, showError, notice} from '../ui.js';
import {chart} from './bill_chart.js';
import {showItems, stateBadge, money, outcomeBadge} from './bill_items.js';

// The channels with a bill source (SPEC §13); '' lists every channel's runs.
const BILL_CHANNELS = ['hmac', 'alipay', 'wechat', 'stripe'];
const RANGE_DAYS = 30;
const RUN_LIMIT = 500;
const POLL_MS = 1000;
const POLL_TRIES = 120;
const KEYS = ['channel', 'from', 'to', 'run', 'outcome', 'pageSize'];

// The browser's calendar day `offset` days from today, YYYY-MM-DD.
function day(offset) {
  const date = new Date();
  date.setDate(date.getDate() + offset);
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function hashOf(state) {
  const params = new URLSearchParams();
  for (const key of KEYS) if (state[key]) params.set(key, state[key]);
  const text = params.toString();
  return text ? `#/bills?${text}` : '#/bills';
}

function field(label, control) {
  return el('label', {}, label, control);
}

function filterForm(state) {
  const form = el('form', {class: 'card search', id: 'bill-filter'},
    field('Channel', el('select', {name: 'channel', id: 'f-bills-channel'},
      ['', ...BILL_CHANNELS].map((c) => el('option', {value: c, selected: c === state.channel}, c || 'all')))),
    field('From', el('input', {type: 'date', name: 'from', id: 'f-bills-from', value: state.from})),
    field('To', el('input', {type: 'date', name: 'to', id: 'f-bills-to', value: state.to})),
    el('div', {class: 'form-actions'}, el('button', {type: 'submit', id: 'bills-show'}, 'Show')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const e = form.elements;
    window.location.hash = hashOf({...state, channel: e.channel.value, from: e.from.value,
                                   to: e.to.value, run: '', outcome: ''});
  });
  return form;
}

// Waits while the run is running (the API answered 202 with it opened).
async function settled(run) {
  for (let i = 0; i < POLL_TRIES && run.state === 'running'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    run = await api('GET', `/api/bill-runs/${encodeURIComponent(run.id)}`);
  }
  return run;
}

function runSummary(run) {
  return [`Run ${run.id} (${run.channel} ${run.date}): `, stateBadge(run),
          ` ${run.rows} rows, ${run.matched} matched, ${run.repaired} repaired, ` +
          `${run.discrepancies} discrepancies.`];
}

function reconcileForm(state, refresh) {
  const outcome = el('div', {class: 'outcome', id: 'reconcile-outcome', 'aria-live': 'polite'});
  const button = el('button', {type: 'submit', id: 'reconcile'}, 'Reconcile');
  const form = el('form', {class: 'card search', id: 'reconcile-form'},
    el('h3', {class: 'wide'}, 'Reconcile a bill'),
    field('Channel', el('select', {name: 'channel', id: 'f-reconcile-channel', required: true},
      BILL_CHANNELS.map((c) => el('option', {value: c, selected: c === (state.channel || 'hmac')}, c)))),
    field('Bill date', el('input', {type: 'date', name: 'date', id: 'f-reconcile-date',
                                    value: day(-1), max: day(1), required: true})),
    el('div', {class: 'form-actions'}, button),
    outcome);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const channel = form.elements.channel.value;
    const date = form.elements.date.value;
    if (!(await confirmAction(`Reconcile the ${channel} bill of ${date}? The engine fetches the ` +
        'gateway\'s bill, repairs what it can through the payment pipeline and records the rest ' +
        'as discrepancies. Running a day again applies nothing twice.'))) return;
    button.disabled = true;
    clear(outcome).append('Starting…');
    try {
      const opened = await api('POST', '/api/bill-runs', {body: {channel, date}});
      append(clear(outcome), runSummary(opened));
      await refresh();
      const run = await settled(opened);
      append(clear(outcome), [runSummary(run), ' ',
        el('a', {href: hashOf({...state, run: String(run.id), outcome: ''}), id: 'reconcile-open'}, 'Items')]);
      notice(`Bill run ${run.id} ${run.state}.`);
      await refresh();
    } catch (error) {
      clear(outcome).append(el('span', {class: 'bad'}, error.message));
    } finally { button.disabled = false; }
  });
  return form;
}

function otherCounts(run) {
  const shown = new Set(['matched', 'repaired']);
  const rest = Object.entries(run.counts || {}).filter(([o, n]) => n > 0 && !shown.has(o));
  return rest.length === 0 ? '—'
    : rest.map(([o, n]) => el('span', {class: 'count'}, outcomeBadge(o), ` ${n}`));
}

function runsTable(runs, state) {
  return table([
    {label: 'Run', cell: (r) => el('a', {href: hashOf({...state, run: String(r.id), outcome: ''}),
      class: `open-run${String(r.id) === state.run ? ' active' : ''}`, dataset: {id: String(r.id)}}, `#${r.id}`)},
    {label: 'Channel', cell: (r) => r.channel},
    {label: 'Bill date', cell: (r) => r.date},
    {label: 'State', cell: (r) => stateBadge(r)},
    {label: 'Rows', cell: (r) => String(r.rows)},
    {label: 'Matched', cell: (r) => String(r.matched)},
    {label: 'Repaired', cell: (r) => String(r.repaired)},
    {label: 'Discrepancies', cell: (r) => String(r.discrepancies)},
    {label: 'By outcome', cell: otherCounts},
    {label: 'Fees', cell: (r) => money(r.feesCents)},
    {label: 'Started', cell: (r) => time(r.startedAt)},
    {label: 'Finished', cell: (r) => time(r.finishedAt)},
  ], runs, 'No bill run in these days.');
}

async function loadRuns(holder, state) {
  const answer = await api('GET', '/api/bill-runs',
                           {query: {channel: state.channel, from: state.from, to: state.to, limit: RUN_LIMIT}});
  // The card's inner width (its padding and border: 34 px).
  clear(holder).append(chart(answer.runs, state.from, state.to, holder.clientWidth - 34),
    el('h3', {}, 'Runs ', badge(String(answer.runs.length), 'count')), runsTable(answer.runs, state));
}

export async function render(page, params) {
  const state = Object.fromEntries(KEYS.map((k) => [k, params.get(k) || '']));
  if (!params.has('from') && !params.has('to')) {
    state.from = day(1 - RANGE_DAYS);
    state.to = day(0);
  }
  const runs = el('div', {id: 'bill-runs'}, el('p', {class: 'muted'}, 'Loading…'));
  const items = el('div', {id: 'bill-items'});
  const refresh = () => loadRuns(runs, state).catch(showError);
  clear(page).append(
    el('h2', {}, 'Bills'),
    el('p', {class: 'muted'}, 'Each run fetches one channel\'s bill of one day from the gateway, ' +
       'matches it row by row with the payments here, repairs what it can and records the rest as ' +
       'discrepancies.'),
    filterForm(state), reconcileForm(state, refresh), runs, items);
  const shown = state.run ? showItems(items, state.run, state.outcome, state.pageSize,
                                      (next) => hashOf({...state, ...next})) : null;
  await Promise.all([loadRuns(runs, state), shown]);
  if (state.run) items.scrollIntoView({block: 'start'});
}
