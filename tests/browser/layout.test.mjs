// The layout check itself: on a page built to break each rule it reports each breach (so that a
// clean result on the UI's views means something), and on a tidy page it reports nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, launch } from './harness.mjs';
import { checkLayout } from './layout.mjs';

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
});

test('the layout check finds clipped, overlapping and off-screen elements', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.setContent(`<body style="margin:0">
    <div style="position:relative;height:60px">
      <span style="position:absolute;left:10px;top:10px">first label</span>
      <span style="position:absolute;left:30px;top:14px">second label</span>
    </div>
    <div style="width:120px;overflow:hidden;white-space:nowrap">a long caption cut on the right side of its box</div>
    <div style="width:120px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis">an ellipsis is a deliberate cut, not a defect</div>
    <button style="margin-left:1250px">off the page</button>
  </body>`);
  const failure = await checkLayout(page, 'selftest-broken', ARTIFACTS).then(() => null, (e) => e.message);
  assert.ok(failure, 'the broken page passed');
  assert.match(failure, /overlaps/);
  assert.match(failure, /is clipped by div/);
  assert.match(failure, /outside the 1280px viewport/);
  assert.match(failure, /the page scrolls sideways/);
  assert.doesNotMatch(failure, /deliberate/);
  await page.setContent(`<body style="margin:8px"><h1>Title</h1><p>Some text that wraps over lines
    in a paragraph.</p><button>OK</button> <input value="x"></body>`);
  await checkLayout(page, 'selftest-tidy', ARTIFACTS);
});
