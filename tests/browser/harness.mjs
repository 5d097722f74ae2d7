// Shared pieces of the browser tests: Debian's Chromium driven by playwright-core (from web/'s
// locked node_modules; no browser download), `numprobe serve` started on a free loopback port,
// the fixture folders, and the checks that the served UI and the report must both pass.
//
// Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR, NUMPROBE_ARTIFACTS (screenshots).
// Optional: NUMPROBE_CHROMIUM (default /usr/bin/chromium), NUMPROBE_PYTHON (default
// /usr/bin/python3, Debian's, with torch); NUMPROBE_UI_TARGET, NUMPROBE_UI_GOLDEN and
// NUMPROBE_UI_EXPECT_OP to run the same checks on another pair of dumps (the demo's).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { VIEWPORTS, checkLayout } from './layout.mjs';

export const SOURCE = process.env.NUMPROBE_SOURCE_DIR || path.resolve(import.meta.dirname, '..', '..');
export const BIN = process.env.NUMPROBE_BIN;
export const ARTIFACTS = process.env.NUMPROBE_ARTIFACTS || fs.mkdtempSync(path.join(os.tmpdir(), 'numprobe-shots-'));
const FIXTURES = path.join(SOURCE, 'tests', 'fixtures', 'msprobe');
// By default the target is the fixture's fp32 dump with a bug planted in one op
// (make_planted.py), compared against the original.
const GOLDEN = process.env.NUMPROBE_UI_GOLDEN || path.join(FIXTURES, 'dump_tensor_base', 'step0');
export const EXPECT_OP = process.env.NUMPROBE_UI_EXPECT_OP || 'Functional.linear.0.forward';
const PYTHON = process.env.NUMPROBE_PYTHON || '/usr/bin/python3';

const require = createRequire(path.join(SOURCE, 'web', 'package.json'));
const { chromium } = require('playwright-core');

export async function launch() {
  assert.ok(BIN, 'NUMPROBE_BIN must name the numprobe binary');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.NUMPROBE_CHROMIUM || '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function newPage(browser) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.jsErrors = errors;
  return page;
}

// The fixture dump whose attention scale overflows: Tensor.__mul__.0.forward is the first op with
// finite inputs and a non-finite output (tests/fixtures/msprobe/README.md).
const NAN_DUMP = path.join(FIXTURES, 'dump_statistics_nan');
export const NAN_OP = 'Tensor.__mul__.0.forward';

// numprobe exits 1 when it finds something (a divergence, an anomaly): that is not a failure here.
function run(args) {
  try {
    execFileSync(BIN, args, { stdio: 'pipe' });
  } catch (error) {
    if (error.status !== 1) throw error;
  }
}

// The test data: `single` holds numprobe's compare output of TARGET vs GOLDEN plus numprobe's
// scan of the NaN fixture dump; `multi` holds the same compare result as two steps x two ranks,
// its NPU max scaled per step and rank so that trends and the rank heatmap have something to show.
export function prepareData() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'numprobe-ui-'));
  dataRoot = root;
  const single = path.join(root, 'single');
  let target = process.env.NUMPROBE_UI_TARGET;
  if (!target) {
    const planted = execFileSync(PYTHON, [path.join(import.meta.dirname, 'make_planted.py'), path.join(root, 'planted')], { encoding: 'utf8' });
    assert.equal(planted.trim(), EXPECT_OP);
    target = path.join(root, 'planted', 'step0');
  }
  run(['compare', '-tp', target, '-gp', GOLDEN, '-o', single]);
  run(['scan', NAN_DUMP, '-o', single]);
  const twin = fs.readdirSync(single, { recursive: true }).find((f) => /compare_result_.*\.json$/.test(f));
  assert.ok(twin, 'numprobe compare wrote no JSON twin');
  const result = JSON.parse(fs.readFileSync(path.join(single, twin), 'utf8'));
  const column = result.columns.indexOf('NPU max');
  const multi = path.join(root, 'multi');
  for (const step of [0, 1]) {
    for (const rank of [0, 1]) {
      const copy = structuredClone(result);
      for (const row of copy.rows) {
        if (typeof row[column] === 'number') row[column] *= 1 + step + 0.5 * rank;
      }
      const dir = path.join(multi, `step${step}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `compare_result_rank${rank}_20260101000000.json`), JSON.stringify(copy));
    }
  }
  return { root, single, multi };
}

// Starts `numprobe serve ARGS --port 0` and resolves with its URL once it prints it.
export function serve(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['serve', ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`numprobe serve printed no URL: ${out} ${err}`)), 60000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          stop: () =>
            new Promise((done) => {
              child.on('exit', (code, signal) => done({ code, signal, out, err }));
              child.kill('SIGINT');
            }),
        });
      }
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`numprobe serve exited with ${code}: ${err}`));
    });
  });
}

// The view of the current URL is rendered (the UI marks the body when it is done with a route).
let dataRoot = null;

// The scan_*.json written into the `single` folder (`base` is unused: both UIs show the same).
function scanFile() {
  const dir = path.join(dataRoot, 'single');
  const name = fs.readdirSync(dir).find((f) => /^scan_.*\.json$/.test(f));
  assert.ok(name, 'numprobe scan wrote no scan_*.json');
  return path.join(dir, name);
}

export async function ready(page) {
  await page.waitForFunction(
    () => document.body.dataset.ready === '1' && document.body.dataset.route === location.hash,
    null,
    { timeout: 30000 },
  );
}

export async function open(page, url) {
  if (page.url() === url) await page.reload();
  else await page.goto(url);
  await ready(page);
}

export async function shot(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function tableRows(page) {
  await page.waitForSelector('[data-testid=table-scroll] .grid-spacer[data-loaded=true]');
  return page.$$eval('[data-testid=table-row]', (rows) =>
    rows.map((r) => ({ name: r.querySelector('.cell.name').textContent, level: r.dataset.level, row: r.dataset.row })),
  );
}

async function tableTotal(page) {
  const text = await page.textContent('[data-testid=table-total]');
  return Number(text.replace(/[^0-9]/g, ''));
}

// The checks every UI (served or reported) must pass. `base` ends before the '#'.
export async function checkMainViews(page, base, prefix) {
  // Overview: names the first-divergence op.
  await open(page, `${base}#/overview`);
  const op = (await page.textContent('[data-testid=first-divergence-op]')).trim();
  assert.equal(op, EXPECT_OP);
  // numprobe compare's analysis shows where the error is born in the user's own code.
  if (await page.$('[data-testid=divergence-analysis]')) {
    assert.match(await page.textContent('[data-testid=divergence-analysis]'), /rule: [a-z_]+/);
    assert.match(await page.textContent('[data-testid=divergence-at]'), /^at File .*, line \d+/);
  }
  await shot(page, `${prefix}-overview`);

  // One click lands on the culprit's rows.
  await page.click('[data-testid=first-divergence-op]');
  await page.waitForFunction(() => location.hash.startsWith('#/table'));
  await ready(page);
  const culpritRows = await tableRows(page);
  assert.ok(culpritRows.length > 0, 'no rows for the culprit');
  for (const r of culpritRows) assert.ok(r.name.startsWith(`${EXPECT_OP}.`), `${r.name} is not a row of ${EXPECT_OP}`);
  assert.equal(await tableTotal(page), culpritRows.length);
  assert.ok(culpritRows.some((r) => r.level === 'error' || r.level === 'warning'), 'the culprit has no failing row');
  assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), new RegExp(`op=${EXPECT_OP.replace(/\./g, '\\.')}`));

  // Stack info on demand.
  const failing = culpritRows.find((r) => r.level === 'error' || r.level === 'warning');
  await page.click(`[data-testid=table-row][data-row="${failing.row}"]`);
  await page.waitForSelector('[data-testid=show-stack]:not([disabled])');
  assert.equal(await page.isVisible('[data-testid=stack]'), false);
  await page.click('[data-testid=show-stack]');
  assert.match(await page.textContent('[data-testid=stack]'), /File /);
  await shot(page, `${prefix}-table-culprit`);

  // Filters narrow the table, and the URL keeps them.
  await open(page, `${base}#/table?run=0`);
  await tableRows(page);
  const all = await tableTotal(page);
  const api = EXPECT_OP.split('.')[1];
  await page.fill('[data-testid=filter-name]', api);
  await page.waitForFunction((q) => location.hash.includes(`q=${q}`), api);
  const named = await tableRows(page);
  assert.ok(named.length > 0 && (await tableTotal(page)) < all, `name filter: ${named.length} of ${all}`);
  for (const r of named) assert.ok(r.name.toLowerCase().includes(api.toLowerCase()), r.name);
  await page.click(`[data-testid=filter-${failing.level}]`);
  await page.waitForFunction((l) => location.hash.includes(`result=${l}`), failing.level);
  const both = await tableRows(page);
  assert.ok(both.length > 0 && both.length < named.length, `result filter: ${both.length} of ${named.length}`);
  for (const r of both) assert.ok(r.level === failing.level && r.name.toLowerCase().includes(api.toLowerCase()));
  assert.equal(await tableTotal(page), both.length);
  await shot(page, `${prefix}-table-filtered`);

  // The tree expands: the culprit is revealed inside its modules, and a module opens on click.
  await open(page, `${base}#/tree?run=0&node=${encodeURIComponent(EXPECT_OP)}`);
  const culprit = page.locator(`[data-testid=tree-node][data-name="${EXPECT_OP}"]`);
  await culprit.waitFor({ state: 'visible' });
  assert.equal(await culprit.evaluate((li) => li.classList.contains('selected')), true);
  await page.waitForSelector('[data-testid=tree-graph]');
  await open(page, `${base}#/tree?run=0`);
  const name = await page.evaluate(() => {
    const li = [...document.querySelectorAll('[data-testid=tree-node]')].find((x) => x.querySelector(':scope > .node-line .twisty').textContent === '▸');
    return li ? li.dataset.name : null;
  });
  assert.ok(name, 'no expandable node in the tree');
  await page.locator(`[data-testid=tree-node][data-name="${name}"] > .node-line .twisty`).click();
  await page.waitForFunction((n) => {
    const li = [...document.querySelectorAll('[data-testid=tree-node]')].find((x) => x.dataset.name === n);
    return li && li.getAttribute('aria-expanded') === 'true' && li.querySelector('ul [data-testid=tree-node]');
  }, name);
  await page.fill('[data-testid=tree-search]', EXPECT_OP.split('.')[1]);
  await page.waitForSelector('[data-testid=tree-hit]');
  await shot(page, `${prefix}-tree`);

  // A histogram renders for the culprit's output tensor (its failing one when an output fails;
  // the failing row may be a non-tensor argument, such as the demo's GELU `approximate`), from
  // the tensor files.
  const outputs = culpritRows.filter((r) => r.name.includes('.output.'));
  const shown = outputs.find((r) => r.level === 'error' || r.level === 'warning') || outputs[0];
  assert.ok(shown, 'the culprit has no output row');
  await open(page, `${base}#/tensor?run=0&row=${shown.row}`);
  await page.waitForSelector('[data-testid=histogram][data-rendered=true] canvas', { timeout: 30000 });
  await page.waitForSelector('[data-testid=heatmap][data-rendered=true] canvas');
  assert.ok((await page.$$('[data-testid=worst] tbody tr')).length > 0, 'no worst elements');
  await shot(page, `${prefix}-tensor`);

  // Scan: the first anomaly, the watchpoints and the headroom per dtype, as the scan file says.
  const scan = JSON.parse(fs.readFileSync(scanFile(base), 'utf8'));
  assert.equal(scan.first_anomaly.op_name, NAN_OP);
  await open(page, `${base}#/overview`);
  assert.equal((await page.textContent('[data-testid=first-anomaly-op]')).trim(), NAN_OP);
  await open(page, `${base}#/scan?tab=anomalies`);
  assert.equal((await page.textContent('[data-testid=anomaly-op]')).trim(), NAN_OP);
  await shot(page, `${prefix}-scan`);
  await open(page, `${base}#/scan?tab=watchpoints`);
  const hits = scan.watchpoints.hits.length;
  if (hits) assert.equal((await page.$$('[data-testid=watchpoints] tbody tr')).length, hits);
  else await page.waitForSelector('[data-testid=no-hits]');
  await open(page, `${base}#/scan?tab=headroom`);
  await page.waitForSelector('[data-testid=headroom-chart][data-rendered=true]');
  const flagged = scan.headroom.flagged;
  const overflowing = flagged.filter((r) => Object.values(r.fits).some((f) => f.overflow)).length;
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=headroom-rows] tbody tr').length === Math.min(n, 100), flagged.length);
  await page.check('[data-testid=headroom-overflow]');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=headroom-rows] tbody tr').length === Math.min(n, 100), overflowing);
  await shot(page, `${prefix}-scan-headroom`);
  assert.deepEqual(page.jsErrors, []);
}

// Trends across steps and the rank x op heatmap, on the two-step, two-rank folder.
export async function checkTrendViews(page, base, prefix) {
  await open(page, `${base}#/overview`);
  assert.equal((await page.$$('#run-select option')).length, 4);
  const name = `${EXPECT_OP}.output.0`;
  await open(page, `${base}#/trends?run=0&name=${encodeURIComponent(name)}&column=${encodeURIComponent('NPU max')}&heat=${encodeURIComponent('NPU max')}`);
  await page.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
  await page.waitForSelector('[data-testid=rank-heatmap][data-rendered=true]');
  assert.match(await page.textContent('.view-trends'), /2 of 2 steps have a value/);
  assert.match(await page.textContent('.view-trends'), /2 rank\(s\)/);
  await shot(page, `${prefix}-trends`);
  assert.deepEqual(page.jsErrors, []);
}

// Every view is rendered once its charts have drawn and its table rows have loaded.
async function settled(page) {
  await page.waitForFunction(
    () => document.querySelectorAll('[data-rendered=false]').length === 0 &&
      document.querySelectorAll('.grid-spacer:not([data-loaded=true])').length === 0,
    null,
    { timeout: 30000 },
  );
}

// The routes of every view (every tab of scan), with the culprit selected where a view selects.
async function everyRoute(page, base) {
  await open(page, `${base}#/table?run=0&op=${encodeURIComponent(EXPECT_OP)}`);
  const rows = await tableRows(page);
  const output = rows.find((r) => r.name.includes('.output.')) || rows[0];
  return [
    ['overview', '#/overview?run=0'],
    ['tree', `#/tree?run=0&node=${encodeURIComponent(EXPECT_OP)}`],
    ['table', `#/table?run=0&op=${encodeURIComponent(EXPECT_OP)}&row=${output.row}`],
    ['tensor', `#/tensor?run=0&row=${output.row}`],
    ['trends', `#/trends?run=0&name=${encodeURIComponent(`${EXPECT_OP}.output.0`)}`],
    ['scan-anomalies', '#/scan?tab=anomalies'],
    ['scan-watchpoints', '#/scan?tab=watchpoints'],
    ['scan-headroom', '#/scan?tab=headroom'],
  ];
}

// The screenshot check: each view at 1280x800 and at 1920x1080, photographed, its text, controls
// and charts inside the viewport, not clipped and not overlapping (layout.mjs).
export async function checkEveryViewLayout(page, base, prefix, routes = null) {
  const list = routes || (await everyRoute(page, base));
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    for (const [name, route] of list) {
      await open(page, `${base}${route}`);
      await settled(page);
      const label = `${prefix}-${name}-${viewport.width}x${viewport.height}`;
      await page.screenshot({ path: path.join(ARTIFACTS, `${label}.png`) });
      await checkLayout(page, label, ARTIFACTS);
    }
  }
  assert.deepEqual(page.jsErrors, []);
}

// Leaving a view while its charts are still painting: zrender paints a heatmap's cells in
// slices of 15 ms, one slice per animation frame, and a chart disposed between two slices must
// not throw when the next frame comes (CI's browser.demo once failed on "reading 'layerStack'"
// on a slow machine). Here the page's Date.now() moves 16 ms at every call, so that every slice
// is one cell and every heatmap spans frames whatever the machine; each view is left as soon as
// it is ready, before its charts have finished.
export async function checkLeavingViewsMidPaint(browser, base, routes = null) {
  const page = await newPage(browser);
  await page.addInitScript(() => {
    let now = Date.now();
    Date.now = () => (now += 16);
  });
  const list = routes || (await everyRoute(page, base));
  for (let round = 0; round < 2; ++round) {
    for (const [, route] of list) await open(page, `${base}${route}`);
  }
  // The frames a disposed chart had pending run now.
  await page.waitForTimeout(1000);
  assert.deepEqual(page.jsErrors, []);
  await page.close();
}

// Rows by result: the counts are written on the bars, and a handful of failing rows among many
// passes draws a bar that can be seen (a logarithmic scale: at least a tenth of the passes' bar).
const BAR_COLORS = { error: '#d64545', warning: '#e0a100', unmatched: '#8a7fb8', pass: '#2e9d5b' };

export async function checkCountsChart(page, base) {
  await open(page, `${base}#/overview?run=0`);
  await settled(page);
  const bars = await page.evaluate((colors) => {
    const box = document.querySelector('[data-testid=counts-chart]');
    const texts = [...box.querySelectorAll('svg text')].map((t) => t.textContent.trim());
    const widths = {};
    for (const [level, color] of Object.entries(colors)) {
      widths[level] = Math.max(0, ...[...box.querySelectorAll('svg path')]
        .filter((p) => (p.getAttribute('fill') || '').toLowerCase() === color)
        .map((p) => p.getBoundingClientRect().width));
    }
    return { texts, widths };
  }, BAR_COLORS);
  const counts = await page.evaluate(() => [...document.querySelectorAll('[data-testid^=count-]')]
    .filter((a) => a.dataset.testid.endsWith('-0'))
    .map((a) => [a.dataset.testid.split('-')[1], a.textContent.trim()]));
  assert.ok(counts.some(([level]) => level === 'pass'), `run 0 has no passing rows: ${JSON.stringify(counts)}`);
  const failing = counts.filter(([level]) => level !== 'pass');
  assert.ok(failing.length > 0, `run 0 has no failing rows: ${JSON.stringify(counts)}`);
  for (const [level, count] of counts) {
    assert.ok(bars.texts.includes(`${level} ${count}`), `no label "${level} ${count}" on the bars: ${bars.texts}`);
    assert.ok(bars.widths[level] > 0, `no ${level} bar`);
  }
  const pass = Number(counts.find(([level]) => level === 'pass')[1].replace(/,/g, ''));
  for (const [level, count] of failing) {
    if (Number(count.replace(/,/g, '')) * 10 < pass) {
      assert.ok(bars.widths[level] >= bars.widths.pass / 10, `${count} ${level}: bar ${bars.widths[level]}px, pass bar ${bars.widths.pass}px`);
    }
  }
}

// The module subtree graph fits its box (nothing cut on the right), and pans and zooms.
export async function checkTreeGraph(page, base) {
  await open(page, `${base}#/tree?run=0&node=`);
  await page.waitForSelector('[data-testid=tree-graph] .gnode');
  const fitted = () => page.evaluate(() => {
    const svg = document.querySelector('[data-testid=tree-graph]');
    const box = svg.getBoundingClientRect();
    const scene = svg.querySelector('.scene').getBoundingClientRect();
    const side = document.querySelector('[data-testid=tree-detail]').getBoundingClientRect();
    return {
      inside: scene.left >= box.left - 1 && scene.right <= box.right + 1 && scene.top >= box.top - 1 && scene.bottom <= box.bottom + 1,
      svgInPane: box.right <= side.right + 1,
      scale: Number(svg.dataset.scale),
      transform: svg.querySelector('.scene').getAttribute('transform'),
      nodes: svg.querySelectorAll('.gnode').length,
    };
  });
  const fit = await fitted();
  assert.ok(fit.nodes > 1, 'the graph has one node');
  assert.ok(fit.inside && fit.svgInPane, `graph not fitted: ${JSON.stringify(fit)}`);
  await page.click('[data-testid=graph-zoom-in]');
  const zoomed = await fitted();
  assert.ok(zoomed.scale > fit.scale * 1.2, `zoom in: ${fit.scale} -> ${zoomed.scale}`);
  const box = await page.locator('[data-testid=tree-graph]').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 80, box.y + box.height / 2 - 20, { steps: 5 });
  await page.mouse.up();
  const panned = await fitted();
  assert.notEqual(panned.transform, zoomed.transform, 'drag did not pan');
  assert.equal(panned.scale, zoomed.scale);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, 300);
  await page.waitForFunction((s) => Number(document.querySelector('[data-testid=tree-graph]').dataset.scale) < s, zoomed.scale);
  await page.click('[data-testid=graph-fit]');
  const again = await fitted();
  assert.ok(again.inside && Math.abs(again.scale - fit.scale) < 1e-9, `fit: ${JSON.stringify(again)}`);
}
