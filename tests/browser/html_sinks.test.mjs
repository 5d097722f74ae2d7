// The UI's source builds HTML from data in one way only: text goes into DOM text nodes (el() in
// web/src/util.js), and the one kind of HTML string, ECharts' tooltip formatters, is built with
// the escaping `html` tagged template. This test reads web/src and fails on any other HTML sink
// (innerHTML and its kin) or on a tooltip formatter that does not use `html`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SOURCE } from './harness.mjs';

const SRC = path.join(SOURCE, 'web', 'src');

function sources() {
  return fs.readdirSync(SRC, { recursive: true })
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ file: f, text: fs.readFileSync(path.join(SRC, f), 'utf8') }));
}

test('no HTML sink but the escaping helper', () => {
  const sinks = /\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser/;
  for (const { file, text } of sources()) {
    text.split('\n').forEach((line, k) => assert.doesNotMatch(line, sinks, `${file}:${k + 1}`));
  }
});

test('every ECharts tooltip formatter builds its HTML with html``', () => {
  let formatters = 0;
  for (const { file, text } of sources()) {
    for (const m of text.matchAll(/tooltip:\s*\{/g)) {
      // The tooltip's option object, to its closing brace.
      let depth = 0;
      let end = m.index + m[0].length - 1;
      for (; end < text.length; ++end) {
        if (text[end] === '{') depth++;
        else if (text[end] === '}' && --depth === 0) break;
      }
      const body = text.slice(m.index, end + 1);
      const f = body.indexOf('formatter:');
      if (f < 0) continue;  // ECharts' own formatter escapes names
      formatters++;
      const code = body.slice(f);
      assert.match(code, /html`/, `${file}: a tooltip formatter without html\`\`: ${code.slice(0, 120)}`);
      assert.doesNotMatch(code.replace(/html`(?:[^`\\]|\\.)*`/g, ''), /`/, `${file}: a template literal outside html\`\` in a tooltip formatter`);
    }
  }
  assert.ok(formatters >= 3, `found ${formatters} tooltip formatters`);
});
