// The precheck view, served and reported: `numprobe precheck` of msprobe's bf16 fixture dump
// (whose conv2d and linear ran under bf16 autocast and fail msprobe's standards against the float64
// benchmark) opened in headless Chromium: failing APIs first, one API's outputs, the error
// distributions and the worst elements.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { BIN, SOURCE, launch, newPage, open, serve, shot } from './harness.mjs';

let browser;
let root;
let out;

before(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'numprobe-precheck-ui-'));
  out = path.join(root, 'precheck');
  const fixture = path.join(SOURCE, 'tests', 'fixtures', 'msprobe', 'dump_statistics_bf16', 'step0');
  const rank = fs.readdirSync(fixture).find((d) => d.startsWith('proc') || d.startsWith('rank'));
  try {
    execFileSync(BIN, ['precheck', '-api_info', path.join(fixture, rank, 'dump.json'), '-o', out], { stdio: 'pipe' });
    assert.fail('the bf16 fixture should have failing APIs (exit code 1)');
  } catch (error) {
    if (error.status !== 1) throw error;
  }
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

async function checkPrecheck(page, base, prefix) {
  await open(page, `${base}#/precheck`);
  const errors = Number((await page.textContent('[data-testid=precheck-count-error]')).replace(/[^0-9]/g, ''));
  assert.ok(errors >= 1, 'no failing API counted');
  const rows = await page.$$eval('[data-testid=precheck-row]', (rs) => rs.map((r) => [r.dataset.api, r.querySelector('.badge').textContent]));
  assert.ok(rows.length >= 8, `only ${rows.length} APIs listed`);
  // Failing first.
  for (let i = 0; i < errors; i++) assert.equal(rows[i][1], 'error', `row ${i} (${rows[i][0]}) is not an error`);
  assert.ok(rows.slice(errors).every((r) => r[1] !== 'error'));
  assert.ok(rows.slice(0, errors).some((r) => r[0] === 'Functional.conv2d.0'));
  await page.waitForSelector('[data-testid=precheck-dist-maxabs][data-rendered=true]');
  await page.waitForSelector('[data-testid=precheck-dist-cosine][data-rendered=true]');
  assert.ok((await page.$$('[data-testid=precheck-worst] tbody tr')).length > 0, 'no worst elements');
  await shot(page, `${prefix}-precheck`);
  // One API's outputs, from its link; the URL can be shared.
  await page.click('[data-testid=precheck-row][data-api="Functional.conv2d.0"] a');
  await page.waitForSelector('[data-testid=precheck-detail]');
  const detail = await page.textContent('[data-testid=precheck-detail]');
  assert.match(detail, /Functional\.conv2d\.0\.forward\.output\.0/);
  assert.match(detail, /thousandth_threshold/);
  assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), /api=Functional\.conv2d\.0/);
  await shot(page, `${prefix}-precheck-api`);
  // The verdict filter.
  await page.selectOption('[data-testid=precheck-verdict]', 'pass');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=precheck-row] .badge')].every((b) => b.textContent === 'pass'));
  assert.deepEqual(page.jsErrors, []);
}

test('served precheck view', async () => {
  const server = await serve([out]);
  try {
    await checkPrecheck(await newPage(browser), server.url, 'serve');
  } finally {
    await server.stop();
  }
});

test('reported precheck view', async () => {
  const html = path.join(root, 'precheck.html');
  execFileSync(BIN, ['report', out, '-o', html], { stdio: 'pipe' });
  await checkPrecheck(await newPage(browser), pathToFileURL(html).href, 'report');
});
