// Callback search by payment, order, callback id, channel, result and time; one callback's raw
// request and a replay button with its outcome.
import {api} from '../api.js';
import {el, clear, table, time, badge, pre} from '../dom.js';
import {showError} from '../ui.js';

const CHANNELS = ['', 'hmac', 'alipay', 'wechat', 'stripe', 'standard'];
const RESULTS = ['', 'applied', 'ignored', 'discrepancy', 'duplicate'];
const PAGE_LIMIT = 50;
const FIELDS = ['paymentNo', 'orderNo', 'callbackId', 'channel', 'result', 'from', 'to'];

// A datetime-local value (the browser's local time) as RFC 3339 with an offset.
function isoOf(local) {
  if (!local) return '';
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

function input(name, label, value, attrs = {}) {
  return el('label', {}, label, el('input', {name, id: `f-${name}`, value: value || '', ...attrs}));
}

function select(name, label, options, value) {
  return el('label', {}, label, el('select', {name, id: `f-${name}`},
    options.map((o) => el('option', {value: o, selected: o === (value || '')}, o || 'any'))));
}

export async function render(page, params) {
  const form = el('form', {class: 'card search', id: 'callback-search'},
    input('paymentNo', 'Payment', params.get('paymentNo')),
    input('orderNo', 'Order', params.get('orderNo')),
    input('callbackId', 'Callback id', params.get('callbackId')),
    select('channel', 'Channel', CHANNELS, params.get('channel')),
    select('result', 'Result', RESULTS, params.get('result')),
    input('from', 'From', params.get('fromLocal'), {type: 'datetime-local', step: '1'}),
    input('to', 'Until', params.get('toLocal'), {type: 'datetime-local', step: '1'}),
    el('div', {class: 'form-actions'}, el('button', {type: 'submit', id: 'search'}, 'Search')));
  const results = el('div', {id: 'callback-results'});
  const detail = el('div', {id: 'callback-detail'});
  clear(page).append(el('h2', {}, 'Callbacks'),
    el('p', {class: 'muted'}, 'Every verified callback with the raw request it came in. ' +
       'Rejected requests are only counted (see the header), never stored.'),
    form, el('div', {class: 'split'}, results, detail));

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FIELDS) {
      const value = form.elements[name].value.trim();
      if (!value) continue;
      if (name === 'from' || name === 'to') next.set(`${name}Local`, value);
      else next.set(name, value);
    }
    next.set('run', '1');
    window.location.hash = `#/callbacks?${next}`;
  });

  const query = {limit: PAGE_LIMIT};
  for (const name of FIELDS) {
    const value = name === 'from' || name === 'to' ? isoOf(params.get(`${name}Local`)) : params.get(name);
    if (value) query[name] = value;
  }
  await search(results, detail, query, true);
  if (params.get('open')) await showCallback(detail, params.get('open'));
}

async function search(results, detail, query, fresh) {
  if (fresh) clear(results).append(el('p', {class: 'muted'}, 'Searching…'));
  const page = await api('GET', '/api/callbacks', {query});
  const list = table([
    {label: 'Received', cell: (c) => time(c.receivedAt)},
    {label: 'Callback id', cell: (c) => el('button', {type: 'button', class: 'link open-callback',
      dataset: {id: c.callbackId}, onclick: () => showCallback(detail, c.callbackId)}, c.callbackId)},
    {label: 'Payment', cell: (c) => c.paymentNo
      ? el('a', {href: `#/timeline?paymentNo=${encodeURIComponent(c.paymentNo)}`}, c.paymentNo) : '—'},
    {label: 'Order', cell: (c) => c.orderNo ?? '—'},
    {label: 'Channel', cell: (c) => c.channel ?? '—'},
    {label: 'Result', cell: (c) => badge(c.result ?? 'unrecorded')},
    {label: 'HTTP', cell: (c) => c.httpStatus === null ? '—' : String(c.httpStatus)},
    {label: 'Copies', cell: (c) => String(c.duplicateCount)},
  ], page.callbacks, 'No callback matches.');
  if (fresh) clear(results);
  else results.querySelector('.more')?.remove();
  results.append(list);
  if (page.nextCursor) {
    results.append(el('button', {type: 'button', class: 'more', onclick: () =>
      search(results, detail, {...query, cursor: page.nextCursor}, false).catch(showError)}, 'Older…'));
  }
}

async function showCallback(detail, callbackId) {
  clear(detail).append(el('p', {class: 'muted'}, 'Loading…'));
  try {
    const c = await api('GET', `/api/callbacks/${encodeURIComponent(callbackId)}`);
    const outcome = el('div', {class: 'outcome', id: 'replay-outcome', 'aria-live': 'polite'});
    const replay = el('button', {type: 'button', id: 'replay', onclick: async () => {
      replay.disabled = true;
      clear(outcome).append('Replaying…');
      try {
        const answer = await api('POST', `/api/callbacks/${encodeURIComponent(callbackId)}/replay`);
        clear(outcome).append('Replay answered ', badge(answer.result), ` (HTTP ${answer.httpStatus})`,
                              answer.detail ? `: ${answer.detail}` : '');
      } catch (error) {
        clear(outcome).append(el('span', {class: 'bad'}, error.message));
      } finally { replay.disabled = false; }
    }}, 'Replay');
    clear(detail).append(el('div', {class: 'card'},
      el('h3', {}, 'Callback ', el('span', {class: 'mono', id: 'detail-callback-id'}, c.callbackId)),
      el('dl', {class: 'facts'},
        el('dt', {}, 'Payment'), el('dd', {}, c.paymentNo ?? '—'),
        el('dt', {}, 'Order'), el('dd', {}, c.orderNo ?? '—'),
        el('dt', {}, 'Channel'), el('dd', {}, c.channel ?? '—'),
        el('dt', {}, 'Result'), el('dd', {}, badge(c.result ?? 'unrecorded'), ' HTTP ', String(c.httpStatus ?? '—')),
        el('dt', {}, 'Received'), el('dd', {}, time(c.receivedAt)),
        el('dt', {}, 'Copies'), el('dd', {}, String(c.duplicateCount), ' ', c.lastDuplicateAt ? time(c.lastDuplicateAt) : '')),
      el('h4', {}, 'Headers'), pre(c.rawHeaders),
      el('h4', {}, 'Body'),
      c.rawBody !== undefined && c.rawBody !== null ? el('pre', {class: 'raw', id: 'raw-body'}, c.rawBody)
        : c.rawBodyBase64 ? el('pre', {class: 'raw', id: 'raw-body'}, `base64: ${c.rawBodyBase64}`)
        : el('p', {class: 'muted'}, 'No raw request: made from a gateway query\'s answer, or logged before the engine kept them.'),
      el('div', {class: 'form-actions'}, replay,
         el('span', {class: 'muted'}, ' Runs the stored request through verification (today\'s keys) and the pipeline again.')),
      outcome));
  } catch (error) {
    clear(detail);
    showError(error);
  }
}
