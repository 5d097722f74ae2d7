// Trends: one row's metric or statistic across steps (runs that differ only by step), and a
// rank x op heatmap of a metric for the ranks of one step (each op's worst value over its rows).
import { chart, disposeChart } from '../charts.js';
import { go, replaceParams } from '../router.js';
import { el, formatNumber, html, shortName } from '../util.js';

function defaultColumn(runInfo) {
  const n = runInfo.numeric_columns;
  for (const c of ['Cosine', 'MaxRelativeErr', 'MaxAbsErr', 'Max diff', 'NPU max']) if (n.includes(c)) return c;
  return n[0] || '';
}

export async function render({ backend, info, params, root, run }) {
  const runInfo = info.runs[run];
  if (!runInfo) {
    root.append(el('p', {}, 'No compare run is loaded.'));
    return;
  }
  const firstName = runInfo.divergence.length && runInfo.divergence[0].rows.length ? runInfo.divergence[0].rows[0].name : '';
  const state = {
    name: params.get('name') || firstName,
    column: params.get('column') || defaultColumn(runInfo),
    heat: params.get('heat') || defaultColumn(runInfo),
  };
  const sync = () => replaceParams('trends', { run, ...state });
  root.append(el('h1', {}, 'Trends ', el('span', { class: 'muted' }, runInfo.label)));

  // Across steps.
  const nameInput = el('input', { type: 'text', value: state.name, size: 60, placeholder: 'row name, e.g. Functional.linear.0.forward.output.0', 'data-testid': 'trend-name' });
  const columnSelect = el('select', { 'data-testid': 'trend-column' }, runInfo.numeric_columns.map((c) => el('option', { value: c, selected: c === state.column }, c)));
  const trendBox = el('div', { class: 'chart', 'data-testid': 'trend-chart' });
  const trendNote = el('div', { class: 'muted' });
  root.append(el('section', { class: 'card wide' }, el('h2', {}, 'Across steps'), el('div', { class: 'toolbar' }, nameInput, columnSelect), trendNote, trendBox));

  let trendChart = null;
  async function drawTrend() {
    state.name = nameInput.value.trim();
    state.column = columnSelect.value;
    sync();
    disposeChart(trendChart);
    trendChart = null;
    if (!state.name || !state.column) {
      trendNote.textContent = 'Give a row name and a column.';
      return;
    }
    const t = await backend.trend(run, state.name, state.column);
    const points = t.points;
    const found = points.filter((p) => typeof p.value === 'number').length;
    trendNote.textContent = points.length < 2
      ? `Only one step of ${runInfo.rank_folder || runInfo.label} is loaded: serve a dump root or compare output with several step folders to see a trend.`
      : `${found} of ${points.length} steps have a value.`;
    trendChart = chart(trendBox, {
      tooltip: { trigger: 'axis' },
      grid: { left: 70, right: 20, top: 36, bottom: 40 },
      xAxis: { type: 'category', data: points.map((p) => (p.step >= 0 ? `step ${p.step}` : p.label)) },
      yAxis: { type: 'value', scale: true, name: state.column },
      series: [{ type: 'line', name: state.column, data: points.map((p) => (typeof p.value === 'number' ? p.value : null)), connectNulls: false, symbolSize: 8 }],
    });
    trendChart.on('click', (p) => go('table', { run: points[p.dataIndex].run, q: state.name }));
  }
  nameInput.addEventListener('change', drawTrend);
  columnSelect.addEventListener('change', drawTrend);
  await drawTrend();

  // Rank x op.
  const heatSelect = el('select', { 'data-testid': 'heat-column' }, runInfo.numeric_columns.map((c) => el('option', { value: c, selected: c === state.heat }, c)));
  const heatBox = el('div', { class: 'chart tall', 'data-testid': 'rank-heatmap' });
  const heatNote = el('div', { class: 'muted' });
  root.append(el('section', { class: 'card wide' }, el('h2', {}, `Rank x op${runInfo.scope ? ` (${runInfo.scope})` : ''}`), el('div', { class: 'toolbar' }, heatSelect), heatNote, heatBox));
  let heatChart = null;
  async function drawHeat() {
    state.heat = heatSelect.value;
    sync();
    disposeChart(heatChart);
    heatChart = null;
    if (!state.heat) return;
    const h = await backend.heatmap(run, state.heat, 200);
    heatNote.textContent = `${h.ranks.length} rank(s)` + (h.ranks.length < 2 ? ': this step has a single rank' : '') +
      (h.total_ops > h.ops.length ? ` · the ${h.ops.length} ops with the worst ${state.heat} of ${h.total_ops}` : ` · ${h.ops.length} ops`) +
      (state.heat === 'Cosine' ? ' · per op, the lowest value' : ' · per op, the highest value');
    const data = [];
    let min = Infinity;
    let max = -Infinity;
    h.values.forEach((row, r) => row.forEach((v, o) => {
      if (typeof v !== 'number') return;
      data.push([o, r, v]);
      min = Math.min(min, v);
      max = Math.max(max, v);
    }));
    heatChart = chart(heatBox, {
      tooltip: { formatter: (p) => html`${h.ranks[p.value[1]].label} · ${h.ops[p.value[0]]}: ${formatNumber(p.value[2])}` },
      grid: { left: 90, right: 90, top: 10, bottom: 190 },
      xAxis: { type: 'category', data: h.ops.map((o) => { const s = shortName(o); return s.length > 30 ? s.slice(0, 29) + '…' : s; }), axisLabel: { rotate: 60, fontSize: 10 } },
      yAxis: { type: 'category', data: h.ranks.map((r) => r.label) },
      visualMap: {
        min: Number.isFinite(min) ? min : 0,
        max: Number.isFinite(max) && max > min ? max : (Number.isFinite(min) ? min + 1 : 1),
        calculable: true, orient: 'vertical', right: 0, top: 'center',
        inRange: { color: state.heat === 'Cosine' ? ['#d64545', '#fdd49e', '#f7fbff'] : ['#f7fbff', '#fdd49e', '#d64545'] },
      },
      dataZoom: [{ type: 'slider', xAxisIndex: 0, bottom: 4, height: 16 }],
      series: [{ type: 'heatmap', data, progressive: 0 }],
    });
    heatChart.on('click', (p) => go('table', { run: h.ranks[p.value[1]].run, op: h.ops[p.value[0]] }));
  }
  heatSelect.addEventListener('change', drawHeat);
  await drawHeat();
}
