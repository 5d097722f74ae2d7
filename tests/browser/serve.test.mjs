// The served UI in headless Chromium: `numprobe serve` on the compare of the fixtures (or the
// dumps named by NUMPROBE_UI_TARGET / NUMPROBE_UI_GOLDEN), every view checked and photographed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { checkCountsChart, checkEveryViewLayout, checkMainViews, checkTrendViews, checkTreeGraph, launch, newPage, prepareData, serve } from './harness.mjs';

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

test('served UI: overview, culprit rows, filters, tree, histogram, scan', async () => {
  const server = await serve([data.single]);
  try {
    const page = await newPage(browser);
    await checkMainViews(page, server.url, 'serve');
  } finally {
    const end = await server.stop();
    assert.equal(end.code, 0, end.err);
    assert.match(end.out, /numprobe: stopped/);
  }
});

test('served UI: trends across steps and the rank x op heatmap', async () => {
  const server = await serve([data.multi]);
  try {
    const page = await newPage(browser);
    await checkTrendViews(page, server.url, 'serve');
  } finally {
    await server.stop();
  }
});

test('served UI: counts on the bars, the tree graph fits, pans and zooms', async () => {
  const server = await serve([data.single]);
  try {
    const page = await newPage(browser);
    await checkCountsChart(page, server.url);
    await checkTreeGraph(page, server.url);
    assert.deepEqual(page.jsErrors, []);
  } finally {
    await server.stop();
  }
});

test('served UI: every view at 1280x800 and 1920x1080, nothing clipped or overlapping', async () => {
  const server = await serve([data.single]);
  try {
    const page = await newPage(browser);
    await checkEveryViewLayout(page, server.url, 'serve-layout');
  } finally {
    await server.stop();
  }
});
