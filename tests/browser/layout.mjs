// The geometry check of a rendered view: every piece of text and every control, chart and image
// must lie inside the viewport horizontally (the page never scrolls sideways), must not be cut by
// an ancestor that hides its overflow (deliberate ellipses excepted), and must not overlap another
// (bounding boxes, a 2 px tolerance). Boxes are measured per line of text (Range client rects), so
// wrapped text is judged line by line. What sits in a scroll container counts only where it shows.
import assert from 'node:assert/strict';
import path from 'node:path';

export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

// Runs in the page: returns the problems found, as sentences.
function measure() {
  const TOLERANCE = 2;
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  if (scrollWidth > vw + 1) problems.push(`the page scrolls sideways: ${scrollWidth}px wide in a ${vw}px viewport`);

  const label = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    const testid = el.closest('[data-testid]');
    if (testid) s += ` in [data-testid=${testid.dataset.testid}]`;
    else if (el.className && typeof el.className === 'string') s += `.${el.className.trim().split(/\s+/).join('.')}`;
    return s;
  };
  const shown = (el) => el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  // Boxes: each line of each text node, and each control or graphic (not looking inside charts
  // and drawings, which are one box each).
  const CHART = '[_echarts_instance_]';  // an ECharts container: layered canvases, one box
  const ATOMIC = `${CHART}, input, select, button, textarea, canvas, svg, img`;
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const owner = node.parentElement;
    if (!owner || owner.closest(`svg, canvas, select, option, script, style, noscript, textarea, ${CHART}`)) continue;
    if (!shown(owner)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) {
      if (r.width > 0.5 && r.height > 0.5) boxes.push({ owner, clipFrom: owner, rect: r, what: `"${node.textContent.trim().slice(0, 40)}" (${label(owner)})` });
    }
  }
  for (const el of document.body.querySelectorAll(ATOMIC)) {
    if (el.parentElement && el.parentElement.closest(`svg, ${CHART}`)) continue;
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0.5 && r.height > 0.5) boxes.push({ owner: el, clipFrom: el.parentElement, rect: r, what: label(el) });
  }

  const intersect = (a, b) => ({
    left: Math.max(a.left, b.left),
    top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right),
    bottom: Math.min(a.bottom, b.bottom),
  });
  const empty = (r) => r.right - r.left <= 0.5 || r.bottom - r.top <= 0.5;
  const fmt = (r) => `[${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.right)},${Math.round(r.bottom)}]`;

  const visible = [];
  for (const box of boxes) {
    let part = { left: box.rect.left, top: box.rect.top, right: box.rect.right, bottom: box.rect.bottom };
    let cut = null;
    // A text's own element may cut it; a control or a chart is cut by its ancestors.
    for (let a = box.clipFrom; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      const clipsX = s.overflowX !== 'visible';
      const clipsY = s.overflowY !== 'visible';
      if (!clipsX && !clipsY) continue;
      const r = a.getBoundingClientRect();
      const scrolls = /auto|scroll/.test(s.overflowX + s.overflowY);
      // Cut by an ancestor that hides overflow: a defect, unless that is a deliberate ellipsis.
      const hidesX = clipsX && !/auto|scroll/.test(s.overflowX);
      const hidesY = clipsY && !/auto|scroll/.test(s.overflowY);
      const ellipsis = (el) => getComputedStyle(el).textOverflow === 'ellipsis';
      if (!scrolls && !cut && !(ellipsis(a) || ellipsis(box.owner))) {
        const outX = hidesX && (box.rect.left < r.left - TOLERANCE || box.rect.right > r.right + TOLERANCE);
        const outY = hidesY && (box.rect.top < r.top - TOLERANCE || box.rect.bottom > r.bottom + TOLERANCE);
        if (outX || outY) cut = `${box.what} ${fmt(box.rect)} is clipped by ${label(a)} ${fmt(r)}`;
      }
      part = intersect(part, {
        left: clipsX ? r.left : -Infinity,
        right: clipsX ? r.right : Infinity,
        top: clipsY ? r.top : -Infinity,
        bottom: clipsY ? r.bottom : Infinity,
      });
    }
    if (empty(part)) continue;  // scrolled out of its container: not shown
    if (cut) problems.push(cut);
    if (part.left < -TOLERANCE || part.right > vw + TOLERANCE || part.top + window.scrollY < -TOLERANCE) {
      problems.push(`${box.what} ${fmt(part)} is outside the ${vw}px viewport`);
    }
    visible.push({ ...box, part });
  }

  // Overlaps between boxes of which neither contains the other.
  let overlaps = 0;
  for (let i = 0; i < visible.length && overlaps < 20; ++i) {
    for (let j = i + 1; j < visible.length; ++j) {
      const a = visible[i];
      const b = visible[j];
      // The lines of one element, and an element and what it contains, may share space.
      if (a.owner.contains(b.owner) || b.owner.contains(a.owner)) continue;
      const x = intersect(a.part, b.part);
      if (x.right - x.left > TOLERANCE && x.bottom - x.top > TOLERANCE) {
        problems.push(`${a.what} ${fmt(a.part)} overlaps ${b.what} ${fmt(b.part)}`);
        if (++overlaps >= 20) break;
      }
    }
  }
  return problems;
}

// Checks the current view at its current viewport size; on failure saves a screenshot under
// `artifacts` named by `name` and fails with the problems found.
export async function checkLayout(page, name, artifacts) {
  const problems = await page.evaluate(measure);
  if (problems.length) {
    await page.screenshot({ path: path.join(artifacts, `layout-${name}.png`), fullPage: true });
  }
  assert.deepEqual(problems, [], `layout of ${name}: ${problems.length} problem(s)`);
}
