// `numprobe report` opened from disk (file://) in headless Chromium: the same checks as the
// served UI, with the data embedded in the page and no server running.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { BIN, EXPECT_OP, checkCountsChart, checkEveryViewLayout, checkLeavingViewsMidPaint, checkMainViews, checkTrendViews, checkTreeGraph, launch, newPage, open, prepareData, ready, shot } from './harness.mjs';

let browser;
let data;

before(async () => {
  data = prepareData();
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (data) fs.rmSync(data.root, { recursive: true, force: true });
});

function report(source, name, extra = []) {
  const out = path.join(data.root, name);
  execFileSync(BIN, ['report', source, '-o', out, ...extra], { stdio: 'pipe' });
  const html = fs.readFileSync(out, 'utf8');
  // Self-contained: no external script, style or fetch target.
  assert.doesNotMatch(html, /<script[^>]+src=/);
  assert.doesNotMatch(html, /<link[^>]+stylesheet/);
  return pathToFileURL(out).href;
}

test('report from disk: overview, culprit rows, filters, tree, histogram, scan', async () => {
  const url = report(data.single, 'report.html');
  const page = await newPage(browser);
  await checkMainViews(page, url, 'report');
});

test('report from disk: trends and the rank x op heatmap', async () => {
  const url = report(data.multi, 'report-multi.html');
  const page = await newPage(browser);
  await checkTrendViews(page, url, 'report');
});

test('report from disk: counts on the bars, the tree graph fits, pans and zooms', async () => {
  const url = report(data.single, 'report-graph.html');
  const page = await newPage(browser);
  await checkCountsChart(page, url);
  await checkTreeGraph(page, url);
  assert.deepEqual(page.jsErrors, []);
});

test('report from disk: every view at 1280x800 and 1920x1080, nothing clipped or overlapping', async () => {
  const url = report(data.single, 'report-layout.html');
  const page = await newPage(browser);
  await checkEveryViewLayout(page, url, 'report-layout');
  const multi = report(data.multi, 'report-layout-multi.html');
  await checkEveryViewLayout(page, multi, 'report-layout-multi', [
    ['overview', '#/overview?run=0'],
    ['trends', '#/trends?run=0&column=NPU%20max&heat=NPU%20max'],
  ]);
});

test('report from disk: leaving a view while its charts paint throws nothing', async () => {
  const url = report(data.single, 'report-mid-paint.html');
  await checkLeavingViewsMidPaint(browser, url);
  const multi = report(data.multi, 'report-mid-paint-multi.html');
  await checkLeavingViewsMidPaint(browser, multi, [
    ['trends', '#/trends?run=0&column=NPU%20max&heat=NPU%20max'],
    ['overview', '#/overview?run=0'],
  ]);
});

test('a scan-only report shows the cards that apply: no first divergence, the first anomaly', async () => {
  const scanOnly = path.join(data.root, 'scan-only');
  fs.mkdirSync(scanOnly);
  const scan = fs.readdirSync(data.single).find((f) => /^scan_.*\.json$/.test(f));
  fs.copyFileSync(path.join(data.single, scan), path.join(scanOnly, scan));
  const url = report(scanOnly, 'report-scan-only.html');
  const page = await newPage(browser);
  await open(page, `${url}#/overview`);
  assert.equal(await page.$('[data-testid=first-divergence-card]'), null, 'a divergence card without a golden run');
  assert.doesNotMatch(await page.textContent('#view'), /golden/i);
  await page.waitForSelector('[data-testid=first-anomaly-card]');
  assert.equal((await page.textContent('[data-testid=first-anomaly-op]')).trim(), 'Tensor.__mul__.0.forward');
  // A compare result still shows its divergence card (the same check as above, for contrast).
  await open(page, `${report(data.single, 'report-cards.html')}#/overview`);
  await page.waitForSelector('[data-testid=first-divergence-card]');
  assert.deepEqual(page.jsErrors, []);
});

test('a report over --max-rows says what it left out and how to open the full result', async () => {
  // A result folder whose name is markup: the notice shows it as text.
  const folder = path.join(data.root, 'cap<img src=x onerror=alert(1)>');
  fs.cpSync(data.single, folder, { recursive: true });
  const url = report(folder, 'report-capped.html', ['--max-rows', '10']);
  const page = await newPage(browser);
  // The whole table's size, from a report under the cap (the fixture here, the demo's result
  // under browser.demo): it has no notice, and the capped one counts the same rows.
  await open(page, `${report(data.single, 'report-uncapped.html')}#/table?run=0`);
  await page.waitForSelector('[data-testid=table-scroll] .grid-spacer[data-loaded=true]');
  assert.equal(await page.$('[data-testid=rows-omitted]'), null);
  const total = Number((await page.textContent('[data-testid=table-total]')).replace(/[^0-9]/g, ''));
  assert.ok(total > 10, `the table has ${total} rows`);
  await open(page, `${url}#/table?run=0`);
  const notice = await page.waitForSelector('[data-testid=rows-omitted]');
  const text = await notice.textContent();
  assert.ok(text.startsWith(`showing 10 of ${total} rows of `), text);
  assert.ok(text.endsWith(`open the full result with: numprobe serve ${folder}`), text);
  assert.equal(await notice.$('img'), null, 'the folder name became markup');
  await page.waitForSelector('[data-testid=table-scroll] .grid-spacer[data-loaded=true]');
  assert.equal((await page.textContent('[data-testid=table-total]')).trim(), '10 rows');
  await shot(page, 'report-capped-table');
  // Rows keep their index in the full table: the culprit's link opens its own row.
  await open(page, `${url}#/overview`);
  await page.click('[data-testid=first-divergence-op]');
  await page.waitForFunction(() => location.hash.startsWith('#/table'));
  await ready(page);
  await page.waitForSelector('[data-testid=table-scroll] .grid-spacer[data-loaded=true]');
  const row = await page.$eval('[data-testid=table-row]', (r) => r.dataset.row);
  await page.click(`[data-testid=table-row][data-row="${row}"]`);
  await page.waitForFunction(() => document.querySelector('[data-testid=row-detail] h2'));
  assert.ok((await page.textContent('[data-testid=row-detail] h2')).startsWith(`${EXPECT_OP}.`));
  assert.deepEqual(page.jsErrors, []);
});

// A statistics dump of `n` ops (cf. tests/cli/test_compare_divergence.py's write_bf16_chain): the
// golden in float32, the target in bfloat16 with bfloat16-sized drifts and op `planted`'s output
// 10% off, the one output over its own dtype's tolerance.
function writeBf16Chain(file, n, target, planted) {
  const dtype = target ? 'torch.bfloat16' : 'torch.float32';
  const leaf = (scale) => ({ type: 'torch.Tensor', dtype, shape: [8, 1024], Max: 3.25 * scale, Min: -3.125 * scale, Mean: 0.0123 * scale, Norm: 181.02 * scale, requires_grad: true });
  const data = {};
  for (let i = 0; i < n; i++) {
    const s = 1.0 + (i % 13) * 0.01 + (target ? 1e-4 * (i % 7) : 0);
    const out = s * 1.01 * (target && i === planted ? 1.1 : 1.0);
    data[`Functional.op${i}.0.forward`] = { input_args: [leaf(s), { type: 'float', value: 0.5 }], input_kwargs: {}, output: [leaf(out)] };
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ task: 'statistics', level: 'L1', framework: 'pytorch', dump_data_dir: null, data }));
}

test('a precision verdict still links the first output over its own tolerance', async () => {
  const root = path.join(data.root, 'bf16-chain');
  const planted = 'Functional.op60.0.forward';
  for (const side of ['target', 'golden']) {
    writeBf16Chain(path.join(root, side, 'step0', 'rank0', 'dump.json'), 120, side === 'target', 60);
  }
  const out = path.join(root, 'out');
  const compared = spawnSync(BIN, ['compare', '-tp', path.join(root, 'target'), '-gp', path.join(root, 'golden'), '-o', out], { encoding: 'utf8' });
  assert.equal(compared.status, 1, compared.stdout + compared.stderr);
  const page = await newPage(browser);
  await open(page, `${report(out, 'report-bf16-chain.html')}#/overview`);
  await page.waitForSelector('[data-testid=first-divergence-card]');
  const first = (await page.textContent('[data-testid=first-divergence-op]')).trim();
  assert.notEqual(first, planted, 'the verdict is the precision rule, ahead of the planted op');
  const over = await page.waitForSelector('[data-testid=first-over-tolerance] a');
  assert.equal((await over.textContent()).trim(), planted);
  await over.click();
  await page.waitForFunction(() => location.hash.startsWith('#/table'));
  assert.ok(decodeURIComponent(await page.evaluate(() => location.hash)).includes(`op=${planted}`));
  assert.deepEqual(page.jsErrors, []);
});
