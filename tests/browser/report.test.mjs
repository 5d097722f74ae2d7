// `numprobe report` opened from disk (file://) in headless Chromium: the same checks as the
// served UI, with the data embedded in the page and no server running.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { BIN, checkMainViews, checkTrendViews, launch, newPage, prepareData } from './harness.mjs';

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

function report(source, name) {
  const out = path.join(data.root, name);
  execFileSync(BIN, ['report', source, '-o', out], { stdio: 'pipe' });
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
