// Tensor detail of one row, computed by the server from the dumped tensor files: both sides'
// statistics, a histogram of each side's values over shared bins, the |target - golden| heatmap
// of one 2-D slice, and the worst elements with their indices.
import { chart } from '../charts.js';
import { go, href } from '../router.js';
import { el, formatCell, formatCount, formatNumber, html, levelBadge } from '../util.js';

const STAT_ROWS = [
  ['count', 'elements'],
  ['max', 'max'],
  ['min', 'min'],
  ['mean', 'mean'],
  ['norm', 'L2 norm'],
  ['max_abs', 'max |x|'],
  ['min_nonzero_abs', 'min non-zero |x|'],
  ['nan', 'NaN'],
  ['pos_inf', '+Inf'],
  ['neg_inf', '-Inf'],
  ['zero', 'zeros'],
];

function sideCard(title, side) {
  if (!side.present) return el('section', { class: 'card' }, el('h2', {}, title), el('p', { class: 'muted' }, 'no tensor file on this side'));
  return el(
    'section',
    { class: 'card', 'data-testid': `tensor-${title.toLowerCase()}` },
    el('h2', {}, title),
    el('div', { class: 'muted mono' }, side.file),
    side.error
      ? el('p', { class: 'error-box' }, side.error)
      : [
          el('div', {}, `${side.dtype} [${side.shape.join(', ')}]`),
          el(
            'table',
            { class: 'plain' },
            el('tbody', {}, STAT_ROWS.map(([k, label]) => el('tr', {}, el('th', {}, label), el('td', { class: 'num' }, k === 'count' ? formatCount(side.stats[k]) : formatCell(side.stats[k]))))),
          ),
        ],
  );
}

function statisticsFallback(root, row) {
  // No tensor files: compare the recorded statistics instead.
  const cells = Object.fromEntries(row.cells);
  const stats = ['max', 'min', 'mean', 'l2norm'];
  const npu = stats.map((s) => cells[`NPU ${s}`]);
  const bench = stats.map((s) => cells[`Bench ${s}`]);
  if (!npu.some((v) => typeof v === 'number')) return;
  const box = el('div', { class: 'chart', 'data-testid': 'stats-chart' });
  root.append(el('section', { class: 'card wide' }, el('h2', {}, 'Recorded statistics (target vs golden)'), box));
  chart(box, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: 30 },
    xAxis: { type: 'category', data: stats },
    yAxis: { type: 'value' },
    series: [
      { name: 'target', type: 'bar', data: npu.map((v) => (typeof v === 'number' ? v : null)), itemStyle: { color: '#3b6fd8' } },
      { name: 'golden', type: 'bar', data: bench.map((v) => (typeof v === 'number' ? v : null)), itemStyle: { color: '#9aa0a6' } },
    ],
  });
}

export async function render({ backend, info, params, root, run }) {
  const runInfo = info.runs[run];
  if (!runInfo) {
    root.append(el('p', {}, 'No compare run is loaded.'));
    return;
  }
  if (!params.has('row')) {
    root.append(
      el('h1', {}, 'Tensor'),
      el('p', {}, 'Pick a row in the ', el('a', { href: href('table', { run }) }, 'compare table'), ' and open its tensor detail.'),
    );
    return;
  }
  const rowIndex = Number(params.get('row'));
  const slice = Number(params.get('slice') || 0);
  const row = await backend.row(run, rowIndex);
  const name = (row.cells.find(([c]) => c === 'NPU Name') || [null, `row ${rowIndex}`])[1];
  root.append(
    el('h1', {}, 'Tensor ', el('span', { class: 'mono' }, String(name)), ' ', levelBadge(row.level)),
    el('div', { class: 'actions' },
      el('a', { class: 'button', href: href('table', { run, op: row.op, row: rowIndex }) }, 'Rows of this op'),
      el('a', { class: 'button', href: href('tree', { run, node: row.op }) }, 'In the tree')),
  );
  let detail;
  try {
    detail = await backend.tensor(run, rowIndex, slice);
  } catch (error) {
    root.append(el('p', { class: 'note', 'data-testid': 'no-tensor' }, String(error.message || error)));
    statisticsFallback(root, row);
    return;
  }
  root.append(el('div', { class: 'cards' }, sideCard('Target', detail.target), sideCard('Golden', detail.golden)));

  if (detail.edges.length > 1) {
    const centers = detail.edges.slice(0, -1).map((e, k) => (e + detail.edges[k + 1]) / 2);
    const box = el('div', { class: 'chart', 'data-testid': 'histogram' });
    root.append(el('section', { class: 'card wide' }, el('h2', {}, 'Histogram (finite values, shared bins)'), box));
    const series = [];
    if (detail.target.histogram.length) series.push({ name: 'target', type: 'bar', barGap: '0%', data: detail.target.histogram, itemStyle: { color: '#3b6fd8' } });
    if (detail.golden.histogram.length) series.push({ name: 'golden', type: 'bar', data: detail.golden.histogram, itemStyle: { color: '#9aa0a6', opacity: 0.8 } });
    chart(box, {
      tooltip: { trigger: 'axis' },
      legend: { top: 0 },
      grid: { left: 60, right: 20, top: 30, bottom: 60 },
      xAxis: { type: 'category', data: centers.map((c) => formatNumber(c)), axisLabel: { rotate: 45 } },
      yAxis: { type: 'value', name: 'count' },
      dataZoom: [{ type: 'inside' }],
      series,
    });
  }

  if (detail.paired) {
    root.append(
      el('section', { class: 'card wide', 'data-testid': 'tensor-errors' },
        el('h2', {}, 'Errors'),
        el('div', {}, `max |t - g| ${formatNumber(detail.max_abs_err)} · mean |t - g| ${formatNumber(detail.mean_abs_err)} · NaN mismatches ${formatCount(detail.nan_mismatch)} · Inf mismatches ${formatCount(detail.inf_mismatch)}`)),
    );
    const h = detail.heatmap;
    if (h.rows > 0 && h.cols > 0) {
      const values = h.values.map((v) => (typeof v === 'number' ? v : Infinity));
      const finite = values.filter((v) => Number.isFinite(v));
      const max = finite.length ? Math.max(...finite) : 0;
      const data = [];
      values.forEach((v, k) => data.push([k % h.cols, Math.floor(k / h.cols), Number.isFinite(v) ? v : max]));
      const sliceInput = el('input', { type: 'number', min: 0, max: Math.max(0, h.slices - 1), value: h.slice, 'data-testid': 'slice' });
      sliceInput.addEventListener('change', () => go('tensor', { run, row: rowIndex, slice: sliceInput.value }));
      const box = el('div', { class: 'chart square', 'data-testid': 'heatmap' });
      root.append(
        el('section', { class: 'card wide' },
          el('h2', {}, '|target - golden| over a 2-D slice'),
          el('div', { class: 'muted' }, `slice `, sliceInput, ` of ${formatCount(h.slices)} · plane ${h.plane[0]} x ${h.plane[1]}`,
            h.cell[0] > 1 || h.cell[1] > 1 ? ` · each cell is the max over ${h.cell[0]} x ${h.cell[1]} elements` : '',
            values.some((v) => !Number.isFinite(v)) ? ' · NaN/Inf mismatches shown at the top of the scale' : ''),
          box),
      );
      chart(box, {
        tooltip: { formatter: (p) => html`row ${p.value[1] * h.cell[0]}, col ${p.value[0] * h.cell[1]}: ${formatNumber(p.value[2])}` },
        grid: { left: 50, right: 80, top: 10, bottom: 40 },
        xAxis: { type: 'category', data: Array.from({ length: h.cols }, (_, k) => k * h.cell[1]) },
        yAxis: { type: 'category', data: Array.from({ length: h.rows }, (_, k) => k * h.cell[0]), inverse: true },
        visualMap: { min: 0, max: max || 1, calculable: true, formatter: (v) => formatNumber(v), orient: 'vertical', right: 0, top: 'center', inRange: { color: ['#f7fbff', '#fdd49e', '#d64545'] } },
        series: [{ type: 'heatmap', data, progressive: 0 }],
      });
    }
    if (detail.worst.length) {
      root.append(
        el('section', { class: 'card wide' },
          el('h2', {}, `Worst elements (${detail.worst.length})`),
          el('table', { class: 'plain', 'data-testid': 'worst' },
            el('thead', {}, el('tr', {}, ['index', 'target', 'golden', '|t - g|', 'relative'].map((c) => el('th', {}, c)))),
            el('tbody', {}, detail.worst.map((w) => el('tr', {},
              el('td', { class: 'mono' }, `[${w.index.join(', ')}]`),
              el('td', { class: 'num' }, formatCell(w.target)),
              el('td', { class: 'num' }, formatCell(w.golden)),
              el('td', { class: 'num' }, formatCell(w.abs_err)),
              el('td', { class: 'num' }, formatCell(w.rel_err))))))),
      );
    }
  } else if (detail.target.present && detail.golden.present) {
    root.append(el('p', { class: 'note' }, 'The two sides could not be paired element by element (a side is unreadable or the element counts differ).'));
  }
}
