// Names that carry markup (tests/hostile/make_hostile_names.py: an op named
// "Functional.relu<img src=x onerror=alert(1)>.0.forward", a module, a stack frame and a folder
// likewise) render as text in every view of report.html and of serve, with each view's tooltips
// shown. The pages run with their Content-Security-Policy bypassed, so that only the escaping is
// tested: any alert() means markup from the data ran. Then the report's own policy is checked:
// as strict as serve's, its script allowed by hash, and it stops an inline handler by itself.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { BIN, SOURCE, launch, open, serve } from './harness.mjs';

const PYTHON = process.env.NUMPROBE_PYTHON || '/usr/bin/python3';

let browser;
let root;
let hostile;
let results;

function numprobe(args) {
  try {
    execFileSync(BIN, args, { stdio: 'pipe' });
  } catch (error) {
    if (error.status !== 1) throw new Error(`numprobe ${args.join(' ')}: exit ${error.status}: ${error.stderr}`);
  }
}

before(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'numprobe-hostile-'));
  hostile = JSON.parse(execFileSync(PYTHON, [path.join(SOURCE, 'tests', 'hostile', 'make_hostile_names.py'), root], { encoding: 'utf8' }));
  results = path.join(root, hostile.folder, 'results');
  numprobe(['compare', '-tp', hostile.target, '-gp', hostile.golden, '-o', results]);
  numprobe(['scan', hostile.target, '-o', results]);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

// A page whose policy is bypassed; every dialog (an alert() from the payloads) is recorded.
async function unprotectedPage() {
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.dialogs = [];
  page.jsErrors = [];
  page.on('dialog', (d) => {
    page.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => page.jsErrors.push(e.message));
  return page;
}

// Nothing from the data became an element: no image, no handler attribute, no extra script.
async function assertInert(page, where) {
  const found = await page.evaluate(() => ({
    images: document.querySelectorAll('img').length,
    handlers: document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]').length,
    scripts: [...document.querySelectorAll('script')].filter((s) => s.id !== 'numprobe-data' && s.type !== 'module').length,
    svgs: [...document.querySelectorAll('svg')].filter((s) => s.hasAttribute('onload')).length,
  }));
  assert.deepEqual(found, { images: 0, handlers: 0, scripts: 0, svgs: 0 }, where);
  assert.deepEqual(page.dialogs, [], `${where}: markup from the data ran`);
}

// Moves the mouse over a chart's plot until its tooltip names `text`; returns the tooltip's text.
async function hoverUntil(page, selector, text) {
  await page.locator(selector).scrollIntoViewIfNeeded();
  const box = await page.locator(selector).boundingBox();
  for (let y = box.y + 12; y < box.y + box.height - 8; y += 14) {
    for (let x = box.x + 12; x < box.x + box.width - 8; x += 10) {
      await page.mouse.move(x, y);
      const tip = await page.evaluate(([sel, t]) => {
        const tips = [...document.querySelectorAll(`${sel} div`)].filter((d) => d.style.position === 'absolute' && d.textContent.includes(t));
        return tips.length ? { text: tips[0].textContent, html: tips[0].innerHTML, images: tips[0].querySelectorAll('img, svg[onload]').length } : null;
      }, [selector, text]);
      if (tip) return tip;
    }
  }
  return null;
}

async function checkEveryView(page, base, where) {
  const op = hostile.op;
  // Overview: the first divergence and the first anomaly are the hostile op, shown as text; the
  // folder's name too (paths in the header and the runs table).
  await open(page, `${base}#/overview`);
  assert.equal((await page.textContent('[data-testid=first-divergence-op]')).trim(), op);
  assert.equal((await page.textContent('[data-testid=first-anomaly-op]')).trim(), op);
  assert.ok((await page.textContent('body')).includes(hostile.folder), 'the folder name is not shown as text');
  await assertInert(page, `${where} overview`);

  // Table: the op's rows by name, its row detail and its stack with the hostile frame.
  await open(page, `${base}#/table?run=0&op=${encodeURIComponent(op)}`);
  await page.waitForSelector('[data-testid=table-scroll] .grid-spacer[data-loaded=true]');
  const names = await page.$$eval('[data-testid=table-row] .cell.name', (cells) => cells.map((c) => c.textContent));
  assert.ok(names.length > 0 && names.every((n) => n.startsWith(`${op}.`)), `rows: ${names}`);
  const output = await page.$$eval('[data-testid=table-row]', (rows, o) => rows.find((r) => r.querySelector('.cell.name').textContent === `${o}.output.0`).dataset.row, op);
  await page.click(`[data-testid=table-row][data-row="${output}"]`);
  await page.waitForSelector('[data-testid=show-stack]:not([disabled])');
  await page.click('[data-testid=show-stack]');
  assert.ok((await page.textContent('[data-testid=stack]')).includes('<script>alert(3)</script>'), 'the stack frame is not shown as text');
  assert.ok((await page.textContent('#view')).includes('relu<svg onload=alert(2)>'), 'the module path is not shown as text');
  await assertInert(page, `${where} table`);

  // Tree: the hostile module selected, its graph drawn (names in SVG text), the op among its rows.
  await open(page, `${base}#/tree?run=0&node=${encodeURIComponent(hostile.module)}`);
  await page.waitForSelector('[data-testid=tree-graph] .gnode');
  await page.waitForSelector('[data-testid=node-row]');
  assert.ok((await page.textContent('[data-testid=tree-detail]')).includes(hostile.module));
  await page.fill('[data-testid=tree-search]', 'onerror');
  await page.waitForSelector('[data-testid=tree-hit]');
  await assertInert(page, `${where} tree`);

  // Tensor: the op's output from the tensor files, the error heatmap's tooltip shown.
  await open(page, `${base}#/tensor?run=0&row=${output}`);
  await page.waitForSelector('[data-testid=heatmap][data-rendered=true]');
  assert.ok((await page.textContent('#view')).includes(op));
  assert.ok(await hoverUntil(page, '[data-testid=heatmap]', 'row '), 'no tooltip on the tensor heatmap');
  await assertInert(page, `${where} tensor`);

  // Trends: the rank x op heatmap's tooltip names the op (ECharts renders it as HTML).
  await open(page, `${base}#/trends?run=0&name=${encodeURIComponent(`${op}.output.0`)}&column=Cosine&heat=Cosine`);
  await page.waitForSelector('[data-testid=rank-heatmap][data-rendered=true]');
  await page.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
  const tip = await hoverUntil(page, '[data-testid=rank-heatmap]', op);
  assert.ok(tip, 'no heatmap tooltip names the hostile op');
  assert.equal(tip.images, 0);
  assert.ok(tip.html.includes('&lt;img'), `the tooltip's HTML is not escaped: ${tip.html}`);
  assert.ok(await hoverUntil(page, '[data-testid=trend-chart]', 'Cosine'), 'no tooltip on the trend chart');
  await assertInert(page, `${where} trends`);

  // Scan: the anomaly is the hostile op, with its stack.
  for (const tab of ['anomalies', 'watchpoints', 'headroom']) {
    await open(page, `${base}#/scan?tab=${tab}`);
    if (tab === 'anomalies') assert.equal((await page.textContent('[data-testid=anomaly-op]')).trim(), op);
    await assertInert(page, `${where} scan ${tab}`);
  }
  // Overview's counts chart: its tooltip too.
  await open(page, `${base}#/overview`);
  await page.waitForSelector('[data-testid=counts-chart][data-rendered=true]');
  await hoverUntil(page, '[data-testid=counts-chart]', 'pass');
  await assertInert(page, `${where} overview tooltips`);
  assert.deepEqual(page.jsErrors, []);
}

test('hostile names render as text in every view of report.html', async () => {
  const out = path.join(root, 'report.html');
  execFileSync(BIN, ['report', results, '-o', out], { stdio: 'pipe' });
  const page = await unprotectedPage();
  await checkEveryView(page, pathToFileURL(out).href, 'report');
});

test('hostile names render as text in every view of serve', async () => {
  const server = await serve([results]);
  try {
    const page = await unprotectedPage();
    await checkEveryView(page, server.url, 'serve');
  } finally {
    await server.stop();
  }
});

function directives(policy) {
  return Object.fromEntries(policy.split(';').map((d) => d.trim()).filter(Boolean).map((d) => {
    const [name, ...values] = d.split(/\s+/);
    return [name, values];
  }));
}

test("report.html carries a Content-Security-Policy as strict as serve's, and it holds", async () => {
  const out = path.join(root, 'report-csp.html');
  execFileSync(BIN, ['report', results, '-o', out], { stdio: 'pipe' });
  const html = fs.readFileSync(out, 'utf8');
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  assert.ok(meta, 'no Content-Security-Policy in report.html');
  assert.ok(html.indexOf(meta[0]) < html.indexOf('<script'), 'the policy comes after a script');
  const report = directives(meta[1]);
  // The one inline script, allowed by its hash and nothing else.
  const scripts = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  const hash = crypto.createHash('sha256').update(scripts[0][1], 'utf8').digest('base64');
  assert.deepEqual(report['script-src'], [`'sha256-${hash}'`]);
  // Every restriction of serve's policy holds in the report's (frame-ancestors cannot be set by
  // a <meta> element; 'self' has no meaning for a file opened from disk).
  const server = await serve([results]);
  let served;
  try {
    const response = await fetch(server.url);
    served = directives(response.headers.get('content-security-policy'));
  } finally {
    await server.stop();
  }
  for (const [name, values] of Object.entries(served)) {
    if (name === 'frame-ancestors') continue;
    const mine = report[name] || report['default-src'];
    for (const v of mine) assert.ok(v === "'none'" || values.includes(v) || v.startsWith("'sha256-") || (name === 'img-src' && v === 'data:'), `${name} ${v} is looser than serve's ${values}`);
    assert.ok(!mine.includes("'unsafe-eval'") && (name === 'style-src' || !mine.includes("'unsafe-inline'")), `${name}: ${mine}`);
  }
  assert.deepEqual(report['default-src'], ["'none'"]);
  assert.deepEqual(report['base-uri'], ["'none'"]);
  assert.deepEqual(report['form-action'], ["'none'"]);

  // With the policy in force the report runs, and markup put into it cannot run script.
  const page = await browser.newPage();
  const violations = [];
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => {
    violations.push(`dialog ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await open(page, `${pathToFileURL(out).href}#/overview`);
  assert.equal((await page.textContent('[data-testid=first-divergence-op]')).trim(), hostile.op);
  const blocked = await page.evaluate(() => new Promise((resolve) => {
    document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true });
    const div = document.createElement('div');
    div.innerHTML = '<img src="data:," onerror="alert(9)">';
    document.body.append(div);
    setTimeout(() => resolve(null), 3000);
  }));
  assert.match(String(blocked), /^script-src/, 'the policy did not stop an inline handler');
  assert.deepEqual(violations, []);
  assert.deepEqual(errors, []);
});
