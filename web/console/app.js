// The console's entry: the login form (token in sessionStorage only), the hash router and the
// header counters.
import {api, token, ApiError} from './api.js';
import {clear} from './dom.js';
import {showError, hideBanner} from './ui.js';
import {startCounters} from './metrics.js';
import * as discrepancies from './pages/discrepancies.js';
import * as callbacks from './pages/callbacks.js';
import * as timeline from './pages/timeline.js';
import * as bills from './pages/bills.js';

const PAGES = {discrepancies, callbacks, timeline, bills};
let stopCounters = null;

function parseHash() {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const [name, query] = hash.split('?');
  return {name: PAGES[name] ? name : 'discrepancies', params: new URLSearchParams(query || '')};
}

async function route() {
  const page = document.getElementById('page');
  if (!token.get()) {
    showLogin();
    return;
  }
  const {name, params} = parseHash();
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', link.dataset.page === name);
    if (link.dataset.page === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.body.dataset.page = name;
  try {
    await PAGES[name].render(page, params);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      token.clear();
      showLogin();
    }
    showError(error);
  }
}

function showLogin() {
  document.getElementById('login').hidden = false;
  document.getElementById('nav').hidden = true;
  document.getElementById('logout').hidden = true;
  clear(document.getElementById('page'));
  clear(document.getElementById('counters'));
  if (stopCounters) { stopCounters(); stopCounters = null; }
  document.getElementById('token').focus();
}

function showApp() {
  document.getElementById('login').hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('logout').hidden = false;
  if (!stopCounters) stopCounters = startCounters(document.getElementById('counters'));
}

async function login(event) {
  event.preventDefault();
  const field = document.getElementById('token');
  token.set(field.value.trim());
  try {
    // Any authenticated read proves the token.
    await api('GET', '/api/discrepancies', {query: {limit: 1}});
  } catch (error) {
    token.clear();
    showError(error);
    return;
  }
  field.value = '';
  hideBanner();
  showApp();
  await route();
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('login').addEventListener('submit', login);
  document.getElementById('logout').addEventListener('click', () => {
    token.clear();
    showLogin();
  });
  window.addEventListener('hashchange', () => { hideBanner(); route(); });
  if (token.get()) showApp();
  route();
});
