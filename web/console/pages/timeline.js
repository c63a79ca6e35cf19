// One payment's life in time order: callbacks, gateway queries, state moves and discrepancies; how
// it is paid at its gateway, and Close for a pending one.
import {api} from '../api.js';
import {el, clear, time, badge, pre} from '../dom.js';
import {gatewayFacts, closeActions} from './payment_gateway.js';

function summary(entry) {
  const d = entry.detail || {};
  switch (entry.kind) {
    case 'callback':
      return [`${d.callbackId} via ${d.channel}: `, badge(d.result ?? 'unrecorded'),
              d.duplicateCount ? ` and ${d.duplicateCount} copies` : ''];
    case 'query':
      return [`the gateway answered ${d.lastResult ?? '—'} (attempt ${d.attempts})`];
    case 'event':
      return [d.type, d.detail ? ` (${d.detail})` : ''];
    case 'discrepancy':
      return [`${d.id} `, badge(d.kind, 'kind'), d.resolvedAt ? ' resolved' : ' open'];
    default:
      return [];
  }
}

export async function render(page, params) {
  const paymentNo = params.get('paymentNo') || '';
  const form = el('form', {class: 'card search inline', id: 'timeline-form'},
    el('label', {}, 'Payment', el('input', {name: 'paymentNo', id: 'f-timeline-payment', value: paymentNo, required: true})),
    el('div', {class: 'form-actions'}, el('button', {type: 'submit'}, 'Show timeline')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    window.location.hash = `#/timeline?paymentNo=${encodeURIComponent(form.elements.paymentNo.value.trim())}`;
  });
  const holder = el('div', {id: 'timeline'});
  clear(page).append(el('h2', {}, 'Payment timeline'), form, holder);
  if (!paymentNo) {
    holder.append(el('p', {class: 'muted'}, 'Enter a payment number, or open one from a discrepancy or a callback.'));
    return;
  }
  holder.append(el('p', {class: 'muted'}, 'Loading…'));
  const t = await api('GET', `/api/payments/${encodeURIComponent(paymentNo)}/timeline`);
  const p = t.payment;
  clear(holder).append(
    el('div', {class: 'card'},
      el('dl', {class: 'facts'},
        el('dt', {}, 'Payment'), el('dd', {class: 'mono'}, p.paymentNo),
        el('dt', {}, 'Order'), el('dd', {class: 'mono'}, p.orderNo),
        el('dt', {}, 'Status'), el('dd', {}, badge(p.status), ' order ', badge(p.orderStatus)),
        el('dt', {}, 'Channel'), el('dd', {}, p.channel),
        el('dt', {}, 'Amount'), el('dd', {}, `${(p.amountCents / 100).toFixed(2)}`),
        el('dt', {}, 'Created'), el('dd', {}, time(p.createdAt)),
        el('dt', {}, 'At the gateway'), el('dd', {id: 'payment-gateway'}, gatewayFacts(p))),
      closeActions(p, () => render(page, params))),
    t.entries.length === 0 ? el('p', {class: 'muted'}, 'Nothing has happened to this payment yet.')
      : el('ol', {class: 'timeline'}, t.entries.map((entry) => el('li', {class: `entry ${entry.kind}`},
          el('div', {class: 'when'}, time(entry.at)),
          el('div', {class: 'what'}, badge(entry.kind, `entry-${entry.kind}`), ' ', ...summary(entry),
             el('details', {}, el('summary', {}, 'detail'), pre(entry.detail)))))));
}
