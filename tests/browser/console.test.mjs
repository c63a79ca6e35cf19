// Drives the operations console in Debian's chromium (headless) through puppeteer-core. Started by
// tests/functional/console_browser_test.cpp, which runs the engine with real PostgreSQL and Redis
// and makes the data with real signed callbacks and a real bill run; the fixture arrives as JSON in
// SEATFLOW_CONSOLE_FIXTURE. Exits 0 when every step passed; screenshots go to
// SEATFLOW_CONSOLE_SCREENSHOTS (docs/img to refresh the committed ones).
import puppeteer from 'puppeteer-core';
import fs from 'node:fs';
import path from 'node:path';

const STEP_TIMEOUT_MS = 10000;
const TOTAL_TIMEOUT_MS = 80000;
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

async function confirm(page, name = 'confirm') {
  await page.waitForSelector('#confirm-dialog[open] #confirm-ok', {timeout: STEP_TIMEOUT_MS});
  await shot(page, name);
  await page.click('#confirm-ok');
}

// Log in: a wrong token shows the API's error, the right one opens the discrepancies.
async function logIn(page) {
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
}

async function discrepancySteps(page) {
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
}

// Search a callback, look at its raw request and replay it: an applied callback is a duplicate.
async function callbackSteps(page) {
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
}

async function timelineAndMarkupSteps(page) {
  // A timeline: the late callback, the events and the discrepancy in time order.
  await page.goto(`${base}/console#/timeline?paymentNo=${encodeURIComponent(fixture.resolvePayment)}`,
                  {waitUntil: 'networkidle0'});
  await page.waitForSelector('#timeline ol.timeline li');
  const kinds = await page.$$eval('#timeline li.entry', (items) => items.map((li) => li.className));
  check(kinds.some((k) => k.includes('callback')), `timeline has a callback: ${kinds}`);
  check(kinds.some((k) => k.includes('event')), `timeline has an event: ${kinds}`);
  check(kinds.some((k) => k.includes('discrepancy')), `timeline has a discrepancy: ${kinds}`);
  // Created at the dev mock gateway: its pay URL (the mock's checkout page) is a link.
  const payUrl = await page.$eval('#pay-url', (a) => a.getAttribute('href'));
  check(payUrl.startsWith(`${base}/`) && payUrl.includes(fixture.resolvePayment), `the pay URL: ${payUrl}`);
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
}

// The cells ({column label: text}) of bill run `id`'s row once it is no longer running.
async function runRow(page, id) {
  const selector = `#bill-runs a.open-run[data-id="${id}"]`;
  await page.waitForFunction((s) => {
    const link = document.querySelector(s);
    const state = link && link.closest('tr').querySelector('td[data-label="State"]');
    return state !== null && !state.textContent.startsWith('running');
  }, {timeout: STEP_TIMEOUT_MS}, selector);
  return page.$eval(selector, (link) => Object.fromEntries([...link.closest('tr').querySelectorAll('td')]
    .map((td) => [td.dataset.label, td.textContent.trim()])));
}

async function itemRows(page, count) {
  await page.waitForFunction((n) => document.querySelectorAll('#bill-item-list tbody tr').length === n,
                             {timeout: STEP_TIMEOUT_MS}, count);
  return page.$$eval('#bill-item-list tbody tr', (rows) => rows.map((row) => Object.fromEntries(
    [...row.querySelectorAll('td')].map((td) => [td.dataset.label, td.textContent.trim()]))));
}

// The Bills page lists the test's run with its counts and draws its day as a stacked bar.
async function billRunSteps(page) {
  const {billRunId: id, billDate: date} = fixture;
  await page.goto(`${base}/console#/bills`, {waitUntil: 'networkidle0'});
  const cells = await runRow(page, id);
  const facts = JSON.stringify(cells);
  check(cells.Channel === 'hmac' && cells['Bill date'] === date, `the run's channel and day: ${facts}`);
  check(cells.State === 'done', `the run is done: ${facts}`);
  check(cells.Rows === '3' && cells.Matched === '1' && cells.Repaired === '1' &&
        cells.Discrepancies === '1' && cells['By outcome'] === 'amount_mismatch 1', `the run's counts: ${facts}`);
  const bar = await page.$eval(`#bill-chart g.bar[data-date="${date}"]`, (g) => ({
    title: g.querySelector(':scope > title').textContent,
    segments: [...g.querySelectorAll('rect > title')].map((t) => t.textContent)}));
  check(bar.title === `${date}: 1 matched, 1 repaired, 1 discrepancy`, `the bar's title: ${bar.title}`);
  check(JSON.stringify(bar.segments) ===
        JSON.stringify([`${date}: 1 matched`, `${date}: 1 repaired`, `${date}: 1 discrepancy`]),
        `the segments' titles: ${bar.segments}`);
  check(await page.$$eval('#bill-chart g.bar', (bars) => bars.length) === 1, 'one day has a bar');
  const rows = await page.$$eval('.chart-table tbody tr', (trs) => trs.map((tr) =>
    [...tr.querySelectorAll('td')].map((td) => td.textContent).join(' ')));
  check(JSON.stringify(rows) === JSON.stringify([`${date} 1 1 1 1`]), `the chart's table: ${rows}`);
  await shot(page, 'bills');
}

// A run's items: all, by outcome, page by page; the payment and discrepancy links.
async function billItemSteps(page) {
  const id = fixture.billRunId;
  await page.click(`#bill-runs a.open-run[data-id="${id}"]`);
  await waitText(page, '#bill-items h3', `Run ${id}`);
  const outcomes = Object.fromEntries((await itemRows(page, 3)).map((c) => [c.Payment, c.Outcome]));
  check(outcomes[fixture.billMatched] === 'matched' && outcomes[fixture.billRepaired] === 'repaired' &&
        outcomes[fixture.billMismatch] === 'amount_mismatch', `the items' outcomes: ${JSON.stringify(outcomes)}`);
  await shot(page, 'bill-items');
  await page.select('#f-bill-outcome', 'amount_mismatch');
  await page.waitForFunction(() => window.location.hash.includes('outcome=amount_mismatch'));
  const [mismatch] = await itemRows(page, 1);
  check(mismatch.Payment === fixture.billMismatch && mismatch.Gateway === '42.50' && mismatch.Ours === '42.00',
        `the mismatch's amounts: ${JSON.stringify(mismatch)}`);

  // Keyset pages of two: "More" brings the third item, and no more button after it.
  await page.goto(`${base}/console#/bills?run=${id}&pageSize=2`, {waitUntil: 'networkidle0'});
  await itemRows(page, 2);
  await page.click('#bill-items-more');
  const all = await itemRows(page, 3);
  check(all.map((c) => c.Seq).join(',') === '1,2,3', `the pages in seq order: ${all.map((c) => c.Seq)}`);
  check(await page.$('#bill-items-more') === null, 'no More after the last page');

  // The repaired payment's link opens its timeline: paid now.
  await page.$$eval('#bill-item-list a.payment-link', (links, p) =>
    links.find((a) => a.textContent === p).click(), fixture.billRepaired);
  await page.waitForSelector('#timeline ol.timeline li');
  check(await page.evaluate(() => window.location.hash.startsWith('#/timeline?paymentNo=')), 'the timeline opened');
  check((await text(page, '#timeline .facts')).includes(fixture.billRepaired), 'the timeline of the payment');
  check((await text(page, '#timeline .facts')).includes('SUCCESS'), 'the repaired payment is paid');
}

// The bill discrepancy on the Discrepancies page: its badge, its run, resolve but no refund.
async function billDiscrepancySteps(page) {
  const id = fixture.billRunId;
  await page.goto(`${base}/console#/bills?run=${id}&outcome=amount_mismatch`, {waitUntil: 'networkidle0'});
  await itemRows(page, 1);
  await page.click('#bill-item-list a.discrepancy-link');
  await page.waitForSelector('#focused-discrepancy');
  const row = await text(page, '#focused-discrepancy');
  check(row.includes(fixture.billMismatch) && row.includes('amount_mismatch'), `the focused row: ${row}`);
  check(await page.$('#focused-discrepancy .badge.source-bill') !== null, 'the bill badge');
  check(await page.$('#focused-discrepancy button.resolve') !== null, 'a bill discrepancy can be resolved');
  check(await page.$('#focused-discrepancy button.refund') === null, 'no refund for an amount mismatch');
  const href = await page.$eval('#focused-discrepancy a.bill-run-link', (a) => a.getAttribute('href'));
  check(href === `#/bills?run=${id}&outcome=amount_mismatch`, `the run link: ${href}`);
  await shot(page, 'discrepancies-bill');
  await page.click('#focused-discrepancy a.bill-run-link');
  await waitText(page, '#bill-items h3', `Run ${id}`);
  await itemRows(page, 1);
}

// The Reconcile form: confirmed, the 202 run shown until it is done, the list refreshed with it.
async function reconcileSteps(page) {
  const date = fixture.formDate;
  await page.goto(`${base}/console#/bills`, {waitUntil: 'networkidle0'});
  await page.waitForSelector('#reconcile-form');
  await page.select('#f-reconcile-channel', 'hmac');
  await page.$eval('#f-reconcile-date', (input, value) => { input.value = value; }, date);
  const posted = page.waitForResponse((r) => r.url().endsWith('/api/bill-runs') &&
                                             r.request().method() === 'POST');
  await page.click('#reconcile');
  await confirm(page, 'confirm-reconcile');
  check((await posted).status() === 202, 'the run is opened with 202');
  await waitText(page, '#reconcile-outcome', 'done');
  const summary = await text(page, '#reconcile-outcome');
  check(new RegExp(`^Run \\d+ \\(hmac ${date}\\): done 0 rows, 0 matched, 0 repaired, 0 discrepancies\\. Items$`)
    .test(summary), `the run's outcome: ${summary}`);
  const href = await page.$eval('#reconcile-open', (a) => a.getAttribute('href'));
  const id = new URLSearchParams(href.split('?')[1]).get('run');
  await waitText(page, '#error', `Bill run ${id} done`);
  const cells = await runRow(page, id);
  check(cells['Bill date'] === date && cells.State === 'done' && cells.Rows === '0',
        `the form's run: ${JSON.stringify(cells)}`);
  const title = await page.$eval(`#bill-chart g.bar[data-date="${date}"] > title`, (t) => t.textContent);
  check(title === `${date}: 1 run, no items`, `the empty day's bar: ${title}`);
  await shot(page, 'bills-reconciled');
}

// A narrow window: still usable, nothing wider than the window.
async function narrowSteps(page) {
  const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  await page.setViewport(NARROW);
  await page.goto(`${base}/console#/discrepancies?view=resolved`, {waitUntil: 'networkidle0'});
  await page.waitForSelector('#discrepancy-list');
  check(await fits(), 'no horizontal scrolling in a narrow window');
  await shot(page, 'narrow');
  await page.goto(`${base}/console#/callbacks?callbackId=${encodeURIComponent(fixture.replayCallback)}&open=${encodeURIComponent(fixture.replayCallback)}`,
                  {waitUntil: 'networkidle0'});
  await waitText(page, '#raw-body', fixture.replayCallback);
  check(await fits(), 'no horizontal scrolling on the callbacks page in a narrow window');
  await shot(page, 'narrow-callbacks');
  await page.goto(`${base}/console#/bills?run=${fixture.billRunId}`, {waitUntil: 'networkidle0'});
  await itemRows(page, 3);
  await page.waitForSelector('#bill-chart g.bar');
  check(await fits(), 'no horizontal scrolling on the bills page in a narrow window');
  await shot(page, 'narrow-bills');
}

// SPEC §16 on the timeline. How a payment is paid at its gateway, each kind rendered by the page's
// own module: a pay URL as a link (a javascript: one as text), a QR code's text, a client secret's
// first 8 characters only. Then, on the second engine (its hmac gateway a closed port), Close
// answers 502 and only then is "Force close here" offered; it closes the payment here.
async function gatewayCloseSteps(page) {
  const shown = await page.evaluate(async () => {
    const {gatewayFacts} = await import('/console/pages/payment_gateway.js');
    const {el} = await import('/console/dom.js');
    const facts = (p) => {
      const dd = el('dd', {}, gatewayFacts(p));
      return {text: dd.textContent, links: [...dd.querySelectorAll('a')].map((a) => a.getAttribute('href'))};
    };
    return {
      url: facts({pay: {kind: 'url', payUrl: 'https://pay.example/checkout/p-1'}, gatewayRef: null}),
      script: facts({pay: {kind: 'url', payUrl: 'javascript:window.__seatflowXss=2'}, gatewayRef: null}),
      wechat: facts({pay: {kind: 'qr', codeUrl: 'weixin://wxpay/bizpayurl?pr=abc'}, gatewayRef: null}),
      alipay: facts({pay: {kind: 'qr', qrCode: 'https://qr.alipay.com/bax01'}, gatewayRef: null}),
      stripe: facts({pay: {kind: 'client_secret', clientSecret: 'pi_3Qx_secret_Zm9vYmFy'}, gatewayRef: 'pi_3Qx'}),
      none: facts({pay: null, gatewayRef: null}),
    };
  });
  const facts = JSON.stringify(shown);
  check(shown.url.text === 'pay URL https://pay.example/checkout/p-1' &&
        JSON.stringify(shown.url.links) === '["https://pay.example/checkout/p-1"]', `the pay URL: ${facts}`);
  check(shown.script.links.length === 0 && shown.script.text.includes('javascript:'), `a script URL: ${facts}`);
  check(shown.wechat.text === 'QR code weixin://wxpay/bizpayurl?pr=abc' && shown.wechat.links.length === 0 &&
        shown.alipay.text === 'QR code https://qr.alipay.com/bax01', `the QR codes: ${facts}`);
  check(shown.stripe.text === 'client secret pi_3Qx_s…, intent pi_3Qx', `the client secret: ${facts}`);
  check(shown.none.text === 'none: no gateway created it', `no pay: ${facts}`);

  const down = fixture.gatewayDownUrl;
  const paymentNo = fixture.closePayment;
  await page.goto(`${down}/console`, {waitUntil: 'networkidle0'});
  await page.waitForSelector('#login:not([hidden]) #token');
  await page.type('#token', fixture.token);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#discrepancy-list');
  await page.goto(`${down}/console#/timeline?paymentNo=${encodeURIComponent(paymentNo)}`,
                  {waitUntil: 'networkidle0'});
  await page.waitForSelector('#close-payment');
  check((await text(page, '#payment-gateway')) === 'none: no gateway created it', 'the create failed: no pay');
  check(await page.$('#force-close') === null, 'no Force close before the gateway failed to confirm');
  const isClose = (r) => r.url().endsWith('/close') && r.request().method() === 'POST';
  const closed = page.waitForResponse(isClose);
  await page.click('#close-payment');
  await confirm(page, 'confirm-close');
  check((await closed).status() === 502, 'the close is answered 502');
  await waitText(page, '#close-error', 'unreachable');
  await page.waitForSelector('#force-close');
  check((await text(page, '#timeline .facts')).includes('PENDING'), 'still pending after the 502');
  await shot(page, 'close-unconfirmed');
  const forced = page.waitForResponse(isClose);
  await page.click('#force-close');
  await confirm(page, 'confirm-force-close');
  const answer = await forced;
  check(answer.status() === 200 && answer.request().postData() === '{"force":true}',
        `the forced close: ${answer.status()} ${answer.request().postData()}`);
  await waitText(page, '#error', 'closed here without its gateway');
  await waitText(page, '#timeline .facts', 'CLOSED');
  check((await text(page, '#timeline .facts')).includes('CANCELLED'), 'its order is cancelled');
  check(await page.$('#close-payment') === null && await page.$('#force-close') === null,
        'no Close for a closed payment');
  await shot(page, 'timeline-force-closed');
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
    for (const steps of [logIn, discrepancySteps, callbackSteps, timelineAndMarkupSteps, billRunSteps,
                         billItemSteps, billDiscrepancySteps, reconcileSteps, gatewayCloseSteps,
                         narrowSteps]) {
      await steps(page);
    }
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
