// A payment at its gateway (SPEC §16): how the customer pays there, and the Close action that
// closes it at the gateway first, with "Force close here" offered only after the gateway failed to
// confirm.
import {api} from '../api.js';
import {el, clear} from '../dom.js';
import {confirmAction, showError, notice} from '../ui.js';

// Only the start of a Stripe client secret is shown: that there is one, never enough to pay with.
const SECRET_SHOWN_CHARS = 8;

// A pay URL becomes a link only when it is a web address; anything else (javascript:, data:) is
// shown as text.
function webLink(url, id) {
  let parsed = null;
  try { parsed = new URL(url); } catch { parsed = null; }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    return el('code', {id}, url);
  }
  return el('a', {id, href: parsed.href, target: '_blank', rel: 'noopener noreferrer'}, url);
}

// The payment's "pay" object and "gatewayRef" as the operator reads them.
export function gatewayFacts(p) {
  const pay = p.pay && typeof p.pay === 'object' ? p.pay : null;
  const parts = [];
  if (pay && pay.kind === 'url' && typeof pay.payUrl === 'string') {
    parts.push('pay URL ', webLink(pay.payUrl, 'pay-url'));
  } else if (pay && pay.kind === 'qr') {
    const code = typeof pay.codeUrl === 'string' ? pay.codeUrl : pay.qrCode;
    parts.push('QR code ', el('code', {id: 'pay-qr'}, String(code ?? '—')));
  } else if (pay && pay.kind === 'client_secret') {
    const secret = String(pay.clientSecret ?? '');
    parts.push('client secret ', el('code', {id: 'pay-secret'},
      secret.length > SECRET_SHOWN_CHARS ? `${secret.slice(0, SECRET_SHOWN_CHARS)}…` : '…'));
  } else if (pay) {
    parts.push(`pay ${String(pay.kind ?? '—')}`);
  }
  if (p.gatewayRef) {
    parts.push(parts.length ? ', ' : '', 'intent ', el('code', {id: 'gateway-ref'}, p.gatewayRef));
  }
  if (parts.length === 0) return el('span', {class: 'muted', id: 'pay-none'}, 'none: no gateway created it');
  return parts;
}

async function post(paymentNo, body) {
  return api('POST', `/api/payments/${encodeURIComponent(paymentNo)}/close`, {body});
}

// After a 502: why, and the forced close that does without the gateway's word.
function offerForce(p, outcome, error, reload) {
  const force = el('button', {type: 'button', class: 'danger', id: 'force-close', onclick: async () => {
    if (!(await confirmAction(`Close payment ${p.paymentNo} here without its gateway's confirmation? ` +
                              'The gateway may still take the customer\'s money: that payment would ' +
                              'then be a paid-after-cancel discrepancy to refund.'))) return;
    force.disabled = true;
    try {
      await post(p.paymentNo, {force: true});
    } catch (failed) {
      force.disabled = false;
      showError(failed);
      return;
    }
    notice(`Payment ${p.paymentNo} closed here without its gateway.`);
    await reload().catch(showError);
  }}, 'Force close here');
  clear(outcome).append(
    el('p', {class: 'bad', id: 'close-error'}, error.message),
    el('p', {class: 'muted'}, 'Nothing changed here. Try again later, or close it here anyway.'),
    el('div', {class: 'form-actions'}, force));
}

// The Close button of a PENDING payment and the place its outcome is shown; null otherwise.
export function closeActions(p, reload) {
  if (p.status !== 'PENDING') return null;
  const outcome = el('div', {id: 'close-outcome', 'aria-live': 'polite'});
  const close = el('button', {type: 'button', class: 'danger', id: 'close-payment', onclick: async () => {
    if (!(await confirmAction(`Close payment ${p.paymentNo} at its ${p.channel} gateway and cancel ` +
                              `order ${p.orderNo}? Its seats are given back.`))) return;
    clear(outcome);
    close.disabled = true;
    try {
      await post(p.paymentNo);
      notice(`Payment ${p.paymentNo} closed.`);
    } catch (error) {
      close.disabled = false;
      if (error.status === 502) {
        offerForce(p, outcome, error, reload);
        return;
      }
      if (error.status !== 409) {
        showError(error);
        return;
      }
      // Paid at the gateway (applied here now), or paid or refunded here meanwhile: nothing to
      // close; the payment is read again as it is.
      const why = error.body && typeof error.body.error === 'string' ? error.body.error : error.message;
      notice(`Payment ${p.paymentNo} was not closed: ${why}.`);
    }
    await reload().catch(showError);
  }}, 'Close');
  return el('div', {}, el('div', {class: 'form-actions'}, close), outcome);
}
