// A person pays on the dev mock gateway's checkout page in Debian's chromium (headless) through
// puppeteer-core: open the pay URL, see the payment, click Pay, see it paid. Started by
// tests/functional/mock_gateway_payments_test.cpp, which made the order and the payment and checks
// afterwards that the order became PAID; the fixture arrives as JSON in SEATFLOW_CHECKOUT_FIXTURE
// ({payUrl, paymentNo, amount}). Exits 0 when every step passed.
import puppeteer from 'puppeteer-core';

const STEP_TIMEOUT_MS = 10000;
const TOTAL_TIMEOUT_MS = 40000;

const fixture = JSON.parse(process.env.SEATFLOW_CHECKOUT_FIXTURE || '{}');
const chromium = process.env.SEATFLOW_CHROMIUM || '/usr/bin/chromium';

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

async function text(page, selector) {
  return page.$eval(selector, (node) => node.textContent);
}

async function pay(page) {
  const response = await page.goto(fixture.payUrl, {waitUntil: 'networkidle0'});
  check(response.status() === 200, `the page answers 200 (${response.status()})`);
  check(response.headers()['content-security-policy'].includes("script-src 'self'"), 'CSP header');
  check((await text(page, '#payment-no')) === fixture.paymentNo, 'the payment number is shown');
  check((await text(page, '#amount')).startsWith(fixture.amount), 'the amount is shown');
  check((await text(page, '#state')) === 'open', 'the payment is open');
  check(!(await page.$eval('#pay', (node) => node.disabled)), 'Pay is enabled');
  await page.click('#pay');
  await page.waitForFunction(() => document.querySelector('#state').textContent === 'paid',
                             {timeout: STEP_TIMEOUT_MS});
  check((await text(page, '#result')).includes('answered 200'), 'the merchant answered 200');
  check(await page.$eval('#pay', (node) => node.disabled), 'Pay is disabled once paid');
}

async function run() {
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
           '--disable-extensions', '--lang=en-US'],
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    page.on('console', (message) => {
      // A CSP refusal or a script error is a failure of the page itself (the favicon's 404 is not).
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
        problems.push(`console error: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await pay(page);
  } finally {
    await browser.close();
  }
  if (problems.length) throw new Error(problems.join('\n'));
}

const deadline = setTimeout(() => {
  console.error(`checkout browser test: over ${TOTAL_TIMEOUT_MS} ms`);
  process.exit(2);
}, TOTAL_TIMEOUT_MS);
try {
  await run();
  console.log('checkout browser test: passed');
  clearTimeout(deadline);
} catch (error) {
  console.error(`checkout browser test: ${error.stack || error}`);
  process.exit(1);
}
