// Compare table: virtualised (only the visible rows are in the DOM; rows are fetched from the
// server in blocks), sortable by any column, filterable by result, name pattern, metric ranges,
// op and tree node. Filters live in the URL; the row detail (with its stack) opens on click.
import { href, replaceParams } from '../router.js';
import { clear, debounce, el, formatCell, formatCount, levelBadge, shortName } from '../util.js';

const ROW_HEIGHT = 28;
const BLOCK = 200;
// Browsers cap an element's height (Chromium near 33.5 million pixels): past this height the
// scrollbar maps onto the rows proportionally instead of one row per 28 pixels.
const MAX_HEIGHT = 8_000_000;
const FILTER_LEVELS = ['error', 'warning', 'unmatched', 'pass'];

function columnWidth(name) {
  if (name === 'NPU Name' || name === 'Bench Name') return 380;
  if (name === 'Err_message' || name === 'Data_name') return 260;
  if (name.endsWith('Shape')) return 120;
  return 112;
}

export async function render({ backend, info, params, root, run, isCurrent }) {
  const runInfo = info.runs[run];
  if (!runInfo) {
    root.append(el('p', {}, 'No compare run is loaded.'));
    return;
  }
  const columns = runInfo.page_columns.map((c) => runInfo.columns[c]);
  const nameIndex = Math.max(0, columns.indexOf('NPU Name'));
  const state = {
    run,
    result: params.get('result') || '',
    q: params.get('q') || '',
    range: params.getAll('range'),
    node: params.get('node') || '',
    op: params.get('op') || '',
    sort: params.get('sort') || '',
    desc: params.get('desc') || '',
    row: params.get('row') || '',
  };
  let total = 0;
  let blocks = new Map();
  let token = 0;

  const totalLabel = el('span', { class: 'total', 'data-testid': 'table-total' }, '…');
  const chips = el('div', { class: 'chips' });
  const levelButtons = FILTER_LEVELS.map((l) =>
    el('button', { type: 'button', class: `toggle level-${l}`, dataset: { level: l }, 'data-testid': `filter-${l}` }, l),
  );
  const nameInput = el('input', { type: 'search', placeholder: 'name contains… (* and ? glob)', value: state.q, 'data-testid': 'filter-name', size: 32 });
  const numeric = runInfo.numeric_columns;
  const rangeColumn = el('select', { 'aria-label': 'range column', 'data-testid': 'range-column' }, numeric.map((c) => el('option', { value: c }, c)));
  const rangeMin = el('input', { type: 'text', placeholder: 'min', size: 7, 'data-testid': 'range-min' });
  const rangeMax = el('input', { type: 'text', placeholder: 'max', size: 7, 'data-testid': 'range-max' });
  const rangeAdd = el('button', { type: 'button', 'data-testid': 'range-add' }, 'Add range');
  const toolbar = el(
    'div',
    { class: 'toolbar' },
    el('div', { class: 'levels' }, levelButtons),
    nameInput,
    numeric.length ? el('span', { class: 'range' }, rangeColumn, rangeMin, '–', rangeMax, rangeAdd) : null,
    chips,
    totalLabel,
  );

  const template = columns.map((c) => `${columnWidth(c)}px`).join(' ');
  const width = columns.reduce((sum, c) => sum + columnWidth(c), 0);
  const head = el('div', { class: 'grid-head', style: { gridTemplateColumns: template, width: `${width}px` } });
  const spacer = el('div', { class: 'grid-spacer', style: { width: `${width}px` } });
  const scroller = el('div', { class: 'grid-scroll', 'data-testid': 'table-scroll' }, head, spacer);
  const detail = el('aside', { class: 'row-detail', 'data-testid': 'row-detail' });
  // A report of a large result embeds part of this table; say so, and how to see all of it. The
  // text goes into text nodes (el()), so a path or label reads as text, never as markup.
  const omitted = backend.omitted(run);
  const notice = omitted
    ? el(
        'div',
        { class: 'notice', role: 'note', 'data-testid': 'rows-omitted' },
        `showing ${formatCount(omitted.shown)} of ${formatCount(omitted.total)} rows of ${runInfo.rank_folder || runInfo.label || 'this table'} (the rows around the first divergence, the worst and the first rows); open the full result with: `,
        el('code', {}, omitted.command),
      )
    : null;
  root.append(el('h1', {}, 'Compare table ', el('span', { class: 'muted' }, runInfo.label)), notice, toolbar, el('div', { class: 'table-layout' }, scroller, detail));

  function queryParams() {
    return { run: state.run, result: state.result, q: state.q, range: state.range, node: state.node, op: state.op, sort: state.sort, desc: state.desc };
  }

  function syncUrl() {
    replaceParams('table', { ...queryParams(), row: state.row });
  }

  function renderHead() {
    clear(head);
    columns.forEach((c) => {
      const mark = state.sort === c ? (state.desc === '1' ? ' ▼' : ' ▲') : '';
      head.append(
        el('div', { class: 'cell head', title: `Sort by ${c}`, dataset: { column: c }, onclick: () => cycleSort(c) }, c + mark),
      );
    });
  }

  function renderChips() {
    clear(chips);
    const chip = (label, remove) => el('span', { class: 'chip' }, label, el('button', { type: 'button', title: 'remove', onclick: remove }, '×'));
    if (state.op) chips.append(chip(`op: ${state.op}`, () => setState({ op: '' })));
    if (state.node) chips.append(chip(`under: ${shortName(state.node)}`, () => setState({ node: '' })));
    state.range.forEach((r, k) =>
      chips.append(chip(`range ${r}`, () => setState({ range: state.range.filter((_, j) => j !== k) }))),
    );
    const active = state.result ? state.result.split(',') : [];
    for (const b of levelButtons) b.classList.toggle('on', active.includes(b.dataset.level));
  }

  function setState(patch) {
    Object.assign(state, patch);
    syncUrl();
    reload();
  }

  // First click: worst first (largest errors; smallest cosine; texts A to Z), then the other
  // direction, then execution order again.
  function cycleSort(column) {
    const worstFirst = numeric.includes(column) && column !== 'Cosine' ? '1' : '';
    if (state.sort !== column) setState({ sort: column, desc: worstFirst });
    else if (state.desc === worstFirst) setState({ desc: worstFirst ? '' : '1' });
    else setState({ sort: '', desc: '' });
  }

  levelButtons.forEach((b) =>
    b.addEventListener('click', () => {
      const active = new Set(state.result ? state.result.split(',') : []);
      if (active.has(b.dataset.level)) active.delete(b.dataset.level);
      else active.add(b.dataset.level);
      setState({ result: FILTER_LEVELS.filter((l) => active.has(l)).join(',') });
    }),
  );
  nameInput.addEventListener('input', debounce(() => setState({ q: nameInput.value.trim() }), 250));
  rangeAdd.addEventListener('click', () => {
    const lo = rangeMin.value.trim();
    const hi = rangeMax.value.trim();
    if (!lo && !hi) return;
    setState({ range: [...state.range, `${rangeColumn.value}:${lo}:${hi}`] });
  });

  async function fetchBlock(b, mine) {
    if (blocks.has(b)) return;
    blocks.set(b, null);
    const page = await backend.rows({ ...queryParams(), offset: b * BLOCK, limit: BLOCK });
    if (mine !== token) return;
    blocks.set(b, page.rows);
    total = page.total;
    paint();
  }

  function rowElement(row, index, shift) {
    const selected = String(row.i) === state.row;
    return el(
      'div',
      {
        class: `grid-row level-${row.l}${selected ? ' selected' : ''}`,
        style: { top: `${index * ROW_HEIGHT + shift}px`, gridTemplateColumns: template, width: `${width}px` },
        dataset: { row: row.i, level: row.l },
        'data-testid': 'table-row',
        onclick: () => select(row.i),
      },
      row.c.map((v, k) => el('div', { class: `cell${typeof v === 'number' ? ' num' : ''}${k === nameIndex ? ' name' : ''}`, title: String(v) }, formatCell(v))),
    );
  }

  let painted = '';
  // Pixel offset of the rows' top edge for the current scroll position, in the rows' own space
  // (row k starts at k * ROW_HEIGHT there).
  function rowSpaceTop() {
    const real = total * ROW_HEIGHT - scroller.clientHeight;
    const virtual = Math.min(total * ROW_HEIGHT, MAX_HEIGHT) - scroller.clientHeight;
    return virtual > 0 && real > virtual ? (scroller.scrollTop * real) / virtual : scroller.scrollTop;
  }
  function paint() {
    totalLabel.textContent = `${formatCount(total)} rows`;
    spacer.style.height = `${Math.min(total * ROW_HEIGHT, MAX_HEIGHT)}px`;
    const realTop = rowSpaceTop();
    const first = Math.max(0, Math.floor(realTop / ROW_HEIGHT) - 10);
    const count = Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 20;
    const last = Math.min(total, first + count);
    const mine = token;
    for (let b = Math.floor(first / BLOCK); b <= Math.floor(Math.max(first, last - 1) / BLOCK); b++) {
      if (!blocks.has(b) && b * BLOCK < Math.max(total, 1)) fetchBlock(b, mine).catch(showError);
    }
    const key = `${mine}:${first}:${last}:${Math.round(realTop - scroller.scrollTop)}:${state.row}:${[...blocks.values()].filter(Boolean).length}`;
    if (key === painted) return;
    painted = key;
    for (const node of [...spacer.querySelectorAll('.grid-row')]) node.remove();
    const fragment = document.createDocumentFragment();
    for (let k = first; k < last; k++) {
      const rows = blocks.get(Math.floor(k / BLOCK));
      if (!rows) continue;
      const row = rows[k % BLOCK];
      if (row) fragment.append(rowElement(row, k, scroller.scrollTop - realTop));
    }
    spacer.append(fragment);
    spacer.dataset.loaded = 'true';
  }

  function showError(error) {
    clear(detail).append(el('div', { class: 'error-box', 'data-testid': 'error' }, String(error.message || error)));
  }

  async function reload() {
    token++;
    blocks = new Map();
    total = 0;
    painted = '';
    spacer.dataset.loaded = 'false';
    renderHead();
    renderChips();
    scroller.scrollTop = 0;
    const mine = token;
    try {
      const page = await backend.rows({ ...queryParams(), offset: 0, limit: BLOCK });
      if (mine !== token) return;
      blocks.set(0, page.rows);
      total = page.total;
      paint();
    } catch (error) {
      totalLabel.textContent = 'error';
      showError(error);
    }
  }

  async function select(i) {
    state.row = String(i);
    syncUrl();
    painted = '';
    paint();
    clear(detail).append(el('div', { class: 'muted' }, 'loading…'));
    try {
      const r = await backend.row(state.run, i);
      if (!isCurrent() || state.row !== String(i)) return;
      clear(detail);
      const stackButton = el('button', { type: 'button', 'data-testid': 'show-stack' }, r.stack.length ? `Stack (${r.stack.length} frames)` : 'No stack recorded');
      const stack = el('pre', { class: 'stack-lines', hidden: true, 'data-testid': 'stack' }, r.stack.join('\n'));
      stackButton.disabled = r.stack.length === 0;
      stackButton.addEventListener('click', () => {
        stack.hidden = !stack.hidden;
      });
      const nameCell = r.cells.find(([c]) => c === 'NPU Name');
      const metric = runInfo.numeric_columns.includes('Cosine') ? 'Cosine' : runInfo.numeric_columns[0];
      detail.append(
        el('h2', {}, nameCell ? nameCell[1] : `row ${i}`, ' ', levelBadge(r.level)),
        el('div', { class: 'muted' }, 'op ', el('a', { href: href('table', { run: state.run, op: r.op }) }, r.op)),
        r.module_path.length ? el('div', { class: 'module-path' }, 'in ', r.module_path.map((m, k) => [k ? ' › ' : '', el('a', { href: href('tree', { run: state.run, node: m }) }, shortName(m))])) : null,
        el(
          'div',
          { class: 'actions' },
          r.tensor ? el('a', { class: 'button', href: href('tensor', { run: state.run, row: i }), 'data-testid': 'open-tensor' }, 'Tensor detail') : null,
          el('a', { class: 'button', href: href('tree', { run: state.run, node: r.op }) }, 'In the tree'),
          metric && nameCell ? el('a', { class: 'button', href: href('trends', { run: state.run, name: nameCell[1], column: metric }) }, 'Trend') : null,
          stackButton,
        ),
        stack,
        el('table', { class: 'plain cells' }, el('tbody', {}, r.cells.map(([c, v]) => el('tr', {}, el('th', {}, c), el('td', { class: typeof v === 'number' ? 'num' : '' }, formatCell(v)))))),
      );
    } catch (error) {
      showError(error);
    }
  }

  scroller.addEventListener('scroll', () => paint());
  const onResize = () => paint();
  window.addEventListener('resize', onResize);
  await reload();
  if (state.row !== '' && Number.isInteger(Number(state.row))) await select(Number(state.row));
  else detail.append(el('p', { class: 'muted' }, 'Select a row for its details and stack.'));
  return () => window.removeEventListener('resize', onResize);
}
