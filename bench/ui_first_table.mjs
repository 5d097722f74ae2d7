// Helper of ui_table_bench: time to the first rendered row of the compare table in headless
// Chromium (Debian's, driven by playwright-core from web/node_modules), against the time to the
// first rendered view that needs no rows. Each measurement uses a fresh browser context (no
// cache), navigation start to the element. Prints one JSON object.
//   node ui_first_table.mjs URL REPS
import { createRequire } from 'node:module';
import path from 'node:path';

const [url, repsText] = process.argv.slice(2);
const reps = Number(repsText || 5);
const require = createRequire(path.join(import.meta.dirname, '..', 'web', 'package.json'));
const { chromium } = require('playwright-core');

const browser = await chromium.launch({
  executablePath: process.env.NUMPROBE_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

async function time(hash, selector) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const t0 = performance.now();
  await page.goto(url + hash);
  await page.waitForSelector(selector, { timeout: 120000 });
  const ms = performance.now() - t0;
  await context.close();
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const boot = [];
const table = [];
const sorted = [];
for (let i = 0; i < reps; i++) {
  boot.push(await time('#/scan', 'body[data-ready="1"]'));
  table.push(await time('#/table?run=0', '[data-testid=table-row]'));
  sorted.push(await time('#/table?run=0&sort=MaxAbsErr&desc=1', '[data-testid=table-row]'));
}
await browser.close();
console.log(JSON.stringify({ reps, boot_ms: median(boot), table_ms: median(table), sorted_ms: median(sorted) }));
