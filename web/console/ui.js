// Page-wide feedback: the error banner, notices, and the confirmation dialog.
import {el, clear} from './dom.js';

const NOTICE_MS = 8000;

export function showError(error) {
  const banner = document.getElementById('error');
  const message = error && error.message ? error.message : String(error);
  clear(banner).append(el('strong', {}, 'Error '), message,
    el('button', {type: 'button', class: 'link dismiss', onclick: () => { banner.hidden = true; }}, 'dismiss'));
  banner.className = 'error';
  banner.hidden = false;
}

export function notice(message) {
  const banner = document.getElementById('error');
  clear(banner).append(message);
  banner.className = 'notice';
  banner.hidden = false;
  setTimeout(() => { if (banner.className === 'notice') banner.hidden = true; }, NOTICE_MS);
}

export function hideBanner() {
  document.getElementById('error').hidden = true;
}

// A modal confirmation; resolves true only when the operator presses Confirm.
export function confirmAction(message) {
  return new Promise((resolve) => {
    const dialog = el('dialog', {class: 'confirm', id: 'confirm-dialog'},
      el('p', {}, message),
      el('div', {class: 'form-actions'},
        el('button', {type: 'button', class: 'secondary', id: 'confirm-cancel',
                      onclick: () => dialog.close('cancel')}, 'Cancel'),
        el('button', {type: 'button', id: 'confirm-ok', onclick: () => dialog.close('ok')}, 'Confirm')));
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
