// Open and resolved discrepancies; resolve and refund, each after a confirmation.
import {api} from '../api.js';
import {el, clear, table, time, badge, pre} from '../dom.js';
import {confirmAction, showError, notice} from '../ui.js';
import {paymentLink} from './bill_items.js';

// A gateway refund gives the money of a paid-after-cancel/refund back (SPEC §10).
const REFUNDABLE = new Set(['paid_after_cancel', 'paid_after_refund']);
const PAGE_LIMIT = 500;

export async function render(page, params) {
  const showResolved = params.get('view') === 'resolved';
  clear(page).append(
    el('div', {class: 'page-head'},
      el('h2', {}, showResolved ? 'Resolved discrepancies' : 'Open discrepancies'),
      el('div', {class: 'segmented', role: 'group', 'aria-label': 'Which discrepancies'},
        el('a', {href: '#/discrepancies', class: showResolved ? '' : 'active', id: 'view-open'}, 'Open'),
        el('a', {href: '#/discrepancies?view=resolved', class: showResolved ? 'active' : '',
                 id: 'view-resolved'}, 'Resolved'))),
    el('p', {class: 'muted'}, 'A discrepancy is money or seats the engine could not reconcile by ' +
       'itself, such as a payment that succeeded after its order was cancelled, or a row of a ' +
       'gateway\'s daily bill that does not agree with the payment here (marked "bill").'));
  const holder = el('div', {id: 'discrepancy-list'}, el('p', {class: 'muted'}, 'Loading…'));
  page.append(holder);
  const rows = await api('GET', '/api/discrepancies',
                         {query: {open: showResolved ? 'false' : 'true', limit: PAGE_LIMIT}});
  const shown = showResolved ? rows.filter((d) => d.resolvedAt) : rows;
  clear(holder).append(table([
    {label: 'Id', cell: (d) => String(d.id)},
    {label: 'Kind', cell: (d) => [badge(d.kind, 'kind'), source(d)]},
    {label: 'Payment', cell: (d) => paymentLink(d.paymentNo)},
    {label: 'Order', cell: (d) => d.orderNo ?? '—'},
    {label: 'Recorded', cell: (d) => time(d.createdAt)},
    {label: 'Resolved', cell: (d) => time(d.resolvedAt)},
    {label: 'Detail', cell: (d) => el('details', {}, el('summary', {}, 'detail'), pre(d.detail))},
    {label: 'Actions', cell: (d) => actions(d, () => render(page, params))},
  ], shown, showResolved ? 'No resolved discrepancies.' : 'No open discrepancies.'));
  if (params.get('focus')) focus(holder, params.get('focus'), shown, showResolved);
}

// A bill discrepancy (SPEC §13) names its run: a "bill" badge and a link to the run's items.
function source(d) {
  const detail = d.detail || {};
  if (detail.source !== 'bill') return null;
  const runId = String(detail.runId ?? '');
  return el('div', {class: 'source'}, badge('bill', 'source-bill'), ' ',
    runId ? el('a', {class: 'bill-run-link', title: `the ${detail.channel ?? ''} bill of ${detail.billDate ?? '—'}`,
                     href: `#/bills?run=${encodeURIComponent(runId)}&outcome=${encodeURIComponent(d.kind)}`},
               `run ${runId}`) : null);
}

// ?focus=ID (a link from a bill item): that row marked and scrolled to, or where to look for it.
function focus(holder, id, shown, showResolved) {
  const index = shown.findIndex((d) => String(d.id) === id);
  if (index < 0) {
    holder.prepend(el('p', {class: 'muted', id: 'focus-missing'}, `Discrepancy ${id} is not listed here; `,
      el('a', {href: `#/discrepancies?view=${showResolved ? 'open' : 'resolved'}&focus=${encodeURIComponent(id)}`},
         showResolved ? 'see the open ones' : 'see the resolved ones'), '.'));
    return;
  }
  const row = holder.querySelectorAll('tbody tr')[index];
  row.classList.add('focus');
  row.id = 'focused-discrepancy';
  row.scrollIntoView({block: 'center'});
}

function actions(d, reload) {
  if (d.resolvedAt) {
    return d.refund ? el('span', {}, `refund ${d.refund.status}`) : el('span', {class: 'muted'}, 'resolved');
  }
  const box = el('div', {class: 'actions'});
  box.append(el('button', {type: 'button', class: 'resolve', dataset: {id: String(d.id)},
    onclick: async () => {
      if (!(await confirmAction(`Resolve discrepancy ${d.id} (${d.kind}, payment ${d.paymentNo})? ` +
                                'Resolving records that it was dealt with; it moves no money.'))) return;
      try {
        await api('POST', `/api/discrepancies/${encodeURIComponent(d.id)}/resolve`);
        notice(`Discrepancy ${d.id} resolved.`);
        await reload();
      } catch (error) { showError(error); }
    }}, 'Resolve'));
  if (REFUNDABLE.has(d.kind)) {
    box.append(el('button', {type: 'button', class: 'refund danger', dataset: {id: String(d.id)},
      onclick: async () => {
        if (!(await confirmAction(`Refund payment ${d.paymentNo} through its gateway and resolve ` +
                                  `discrepancy ${d.id}? The money goes back to the payer; this ` +
                                  'cannot be undone.'))) return;
        try {
          const answer = await api('POST', `/api/discrepancies/${encodeURIComponent(d.id)}/refund`);
          const refund = answer && answer.refund ? answer.refund : {};
          notice(`Refund ${refund.status || 'done'}${refund.refundNo ? ` (refund ${refund.refundNo})` : ''}` +
                 `${refund.reason ? `: ${refund.reason}` : ''}.`);
          await reload();
        } catch (error) { showError(error); }
      }}, 'Refund'));
  }
  return box;
}
