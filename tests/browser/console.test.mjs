// Drives the operations console in Debian's chromium (headless) through puppeteer-core. Started by
// tests/functional/console_browser_test.cpp, which runs the engine with real PostgreSQL and Redis
// and makes the data with real signed callbacks; the fixture arrives as JSON in
// SEATFLOW_CONSOLE_FIXTURE. Exits 0 when every step passed; screenshots go to
// SEATFLOW_CONSOLE_SCREENSHOTS (docs/img to refresh the committed ones).
import puppeteer from 'puppeteer-core';
import fs from 'node:fs';
import path from 'node:path';

const STEP_TIMEOUT_MS = 10000;
const TOTAL_TIMEOUT_MS = 55000;
const VIEWPORT = {width: 1280, height: 800};
const NARROW = {width: 420, height: 860};

const fixture = JSON.parse(process.env.SEATFLOW_CONSOLE_FIXTURE || '{}');
const base = fixture.baseUrl;
const shots = process.env.SEATFLOW_CONSOLE_SCREENSHOTS || '';
const chromium = process.env.SEATFLOW_CHROMIUM || '/usr/bin/chromium';

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

async function shot(page, name) {
  if (!shots) return;
  fs.mkdirSync(shots, {recursive: true});
  await page.screenshot({path: path.join(shots, `console-${name}.png`)});
}

async function text(page, selector) {
  return page.$eval(selector, (node) => node.textContent);
}

// Waits until `selector`'s text contains `needle`.
async function waitText(page, selector, needle) {
  await page.waitForFunction((s, n) => {
    const node = document.querySelector(s);
    return node && node.textContent.includes(n);
  }, {timeout: STEP_TIMEOUT_MS}, selector, needle);
}

// The table row of the discrepancy list that names `paymentNo`.
async function rowButton(page, paymentNo, buttonClass) {
  const handle = await page.waitForFunction((p, cls) => {
    for (const row of document.querySelectorAll('#discrepancy-list tbody tr')) {
      if (row.textContent.includes(p)) return row.querySelector(`button.${cls}`);
    }
    return null;
  }, {timeout: STEP_TIMEOUT_MS}, paymentNo, buttonClass);
  return handle.asElement();
}

async function confirm(page) {
  await page.waitForSelector('#confirm-dialog[open] #confirm-ok', {timeout: STEP_TIMEOUT_MS});
  await shot(page, 'confirm');
  await page.click('#confirm-ok');
}

async function run() {
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
           '--disable-extensions', '--lang=en-US'],
    defaultViewport: VIEWPORT,
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    page.on('console', (message) => {
      // A CSP refusal or a script error is a failure of the console itself.
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
        problems.push(`console error: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', (dialog) => { problems.push(`unexpected dialog: ${dialog.message()}`); dialog.dismiss(); });

    // Log in: a wrong token shows the API's error, the right one opens the discrepancies.
    const first = await page.goto(`${base}/console`, {waitUntil: 'networkidle0'});
    check(first.headers()['content-security-policy'].includes("default-src 'self'"), 'CSP header');
    await page.waitForSelector('#login:not([hidden]) #token');
    await shot(page, 'login');
    await page.type('#token', 'not-the-token');
    await page.click('#login button[type=submit]');
    await waitText(page, '#error', '401');
    check((await text(page, '#error')).includes('bearer token'), 'the 401 message is shown');
    await page.$eval('#token', (node) => { node.value = ''; });
    await page.type('#token', fixture.token);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#discrepancy-list table');
    check(await page.evaluate(() => document.cookie === ''), 'no cookie is set');
    check(await page.evaluate(() => sessionStorage.length === 1), 'the token is in sessionStorage');
    await waitText(page, '#counters', 'in flight');
    await waitText(page, '#counters', 'relay lag');
    // The rates need two samples of /metrics (2 s apart): then the header shows numbers.
    await page.waitForFunction(() => !document.querySelector('#counters').textContent.includes('…'),
                               {timeout: STEP_TIMEOUT_MS});

    // Resolve the first paid-after-cancel discrepancy (made by a real signed callback).
    await waitText(page, '#discrepancy-list', fixture.resolvePayment);
    await shot(page, 'discrepancies');
    const resolve = await rowButton(page, fixture.resolvePayment, 'resolve');
    await resolve.click();
    await confirm(page);
    await waitText(page, '#error', 'resolved');
    await page.waitForFunction((p) => !document.querySelector('#discrepancy-list').textContent.includes(p),
                               {timeout: STEP_TIMEOUT_MS}, fixture.resolvePayment);
    await page.click('#view-resolved');
    await waitText(page, '#discrepancy-list', fixture.resolvePayment);
    await shot(page, 'discrepancies-resolved');

    // Refund the second one through the gateway: it is resolved with its refund's outcome.
    await page.click('#view-open');
    const refund = await rowButton(page, fixture.refundPayment, 'refund');
    await refund.click();
    await confirm(page);
    await waitText(page, '#error', 'Refund succeeded');
    await page.waitForFunction((p) => !document.querySelector('#discrepancy-list').textContent.includes(p),
                               {timeout: STEP_TIMEOUT_MS}, fixture.refundPayment);
    await page.click('#view-resolved');
    await waitText(page, '#discrepancy-list', fixture.refundPayment);
    await shot(page, 'refunded');

    // Search a callback, look at its raw request and replay it: an applied callback is a duplicate.
    await page.goto(`${base}/console#/callbacks`, {waitUntil: 'networkidle0'});
    await page.waitForSelector('#callback-search');
    await page.type('#f-paymentNo', fixture.replayPayment);
    await page.select('#f-channel', 'hmac');
    // The page's first, unfiltered search may already list the callback; the search re-renders the
    // page (a new hash), so wait for the new results element and its button, not the old list's.
    const unfiltered = await page.$('#callback-results');
    await page.click('#search');
    await page.waitForFunction((old, id) => {
      const results = document.querySelector('#callback-results');
      return results !== null && results !== old &&
             results.querySelector(`button.open-callback[data-id="${id}"]`) !== null;
    }, {timeout: STEP_TIMEOUT_MS}, unfiltered, fixture.replayCallback);
    await page.click(`#callback-results button.open-callback[data-id="${fixture.replayCallback}"]`);
    await waitText(page, '#detail-callback-id', fixture.replayCallback);
    await waitText(page, '#raw-body', fixture.replayCallback);
    await page.click('#replay');
    await waitText(page, '#replay-outcome', 'duplicate');
    await shot(page, 'callbacks');

    // A bad filter: the API's message is shown.
    await page.goto(`${base}/console#/callbacks?channel=paypal`, {waitUntil: 'networkidle0'});
    await waitText(page, '#error', 'channel must be');

    // A timeline: the late callback, the events and the discrepancy in time order.
    await page.goto(`${base}/console#/timeline?paymentNo=${encodeURIComponent(fixture.resolvePayment)}`,
                    {waitUntil: 'networkidle0'});
    await page.waitForSelector('#timeline ol.timeline li');
    const kinds = await page.$$eval('#timeline li.entry', (items) => items.map((li) => li.className));
    check(kinds.some((k) => k.includes('callback')), `timeline has a callback: ${kinds}`);
    check(kinds.some((k) => k.includes('event')), `timeline has an event: ${kinds}`);
    check(kinds.some((k) => k.includes('discrepancy')), `timeline has a discrepancy: ${kinds}`);
    await shot(page, 'timeline');

    // A stored callback whose id and body hold markup renders as text: no element is made of it.
    await page.goto(`${base}/console#/callbacks?callbackId=${encodeURIComponent(fixture.xssCallback)}&run=1`,
                    {waitUntil: 'networkidle0'});
    await page.waitForSelector('#callback-results button.open-callback');
    await page.click('#callback-results button.open-callback');
    await waitText(page, '#raw-body', '<img src=x onerror=');
    check(await page.evaluate(() => document.querySelectorAll('img').length === 0), 'no img element');
    check(await page.evaluate(() => window.__seatflowXss === undefined), 'the onerror never ran');
    check((await text(page, '#detail-callback-id')) === fixture.xssCallback, 'the id is shown as text');
    check(await page.evaluate((id) => document.body.innerText.includes(id), fixture.xssCallback),
          'the markup is visible as text');
    await shot(page, 'callback-markup');

    // A narrow window: still usable, nothing wider than the window.
    await page.setViewport(NARROW);
    await page.goto(`${base}/console#/discrepancies?view=resolved`, {waitUntil: 'networkidle0'});
    await page.waitForSelector('#discrepancy-list');
    check(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1),
          'no horizontal scrolling in a narrow window');
    await shot(page, 'narrow');
    await page.goto(`${base}/console#/callbacks?callbackId=${encodeURIComponent(fixture.replayCallback)}&open=${encodeURIComponent(fixture.replayCallback)}`,
                    {waitUntil: 'networkidle0'});
    await waitText(page, '#raw-body', fixture.replayCallback);
    check(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1),
          'no horizontal scrolling on the callbacks page in a narrow window');
    await shot(page, 'narrow-callbacks');
  } finally {
    await browser.close();
  }
  if (problems.length) throw new Error(problems.join('\n'));
}

const deadline = setTimeout(() => {
  console.error(`console browser test: over ${TOTAL_TIMEOUT_MS} ms`);
  process.exit(2);
}, TOTAL_TIMEOUT_MS);
try {
  await run();
  console.log('console browser test: passed');
  clearTimeout(deadline);
} catch (error) {
  console.error(`console browser test: ${error.stack || error}`);
  process.exit(1);
}
