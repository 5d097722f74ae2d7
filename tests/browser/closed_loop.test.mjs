// The closed loop's report (issue 14): a script trained twice with one closed-loop config, the
// second time with a planted bug (layer_norm's eps); the report.html its stop() wrote into
// dump_path, opened from disk in headless Chromium, names the planted op as the first divergence
// and lands on its rows.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { SOURCE, launch, newPage, open, shot } from './harness.mjs';

let browser;
let root;
let report;
let planted;

before(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'numprobe-closed-loop-ui-'));
  const printed = execFileSync('/usr/bin/python3', [path.join(SOURCE, 'tests', 'browser', 'make_closed_loop.py'), root], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: process.env.NUMPROBE_PYTHONPATH || '' },
  });
  [report, planted] = printed.trim().split('\n').slice(-2);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

test('the closed loop report names the planted op and shows its rows', async () => {
  const html = fs.readFileSync(report, 'utf8');
  assert.doesNotMatch(html, /<script[^>]+src=/); // self-contained, as `numprobe report` writes it
  const page = await newPage(browser);
  const base = pathToFileURL(report).href;
  await open(page, `${base}#/overview`);
  assert.equal((await page.textContent('[data-testid=first-divergence-op]')).trim(), planted);
  assert.match(await page.textContent('[data-testid=divergence-analysis]'), /rule: argument/);
  await shot(page, 'closed-loop-overview');
  await page.click('[data-testid=first-divergence-op]');
  await page.waitForFunction(() => location.hash.startsWith('#/table'));
  await page.waitForSelector('[data-testid=table-row]');
  const names = await page.$$eval('[data-testid=table-row] .cell.name', (cells) => cells.map((c) => c.textContent));
  assert.ok(names.length > 0 && names.every((n) => n.startsWith(`${planted}.`)), names.join(', '));
  await shot(page, 'closed-loop-culprit');
  assert.deepEqual(page.jsErrors, []);
});
