// Precheck: `numprobe precheck`'s result (precheck_{ts}.json): the APIs that fail first, each
// API's outputs with msprobe's metrics and numprobe's verdict by its standard, the distributions
// of the errors, and the worst elements over all outputs.
import { chart } from '../charts.js';
import { href, replaceParams } from '../router.js';
import { LEVEL_COLORS, clear, debounce, el, formatCell, formatCount } from '../util.js';

const ORDER = { error: 0, warning: 1, pass: 2, SKIP: 3, ' ': 4 };
const VERDICT_LEVEL = { error: 'error', warning: 'warning', pass: 'pass', SKIP: 'none', ' ': 'none' };
const METRICS = [
  ['cosine', 'cosine'],
  ['max_abs_err', 'max abs err'],
  ['dual_100', 'dual-100'],
  ['dual_1000', 'dual-1000'],
  ['dual_10000', 'dual-10000'],
  ['error_rate', 'error rate'],
  ['error_balance', 'error balance'],
  ['rmse', 'RMSE'],
  ['small_value_err_ratio', 'small-value err'],
  ['max_rel_err', 'max rel err'],
  ['mean_rel_err', 'mean rel err'],
  ['inf_nan_err_ratio', 'inf/nan err'],
  ['rel_err_ratio', 'rel err ratio'],
  ['abs_err_ratio', 'abs err ratio'],
  ['max_ulp_err', 'max ULP'],
  ['mean_ulp_err', 'mean ULP'],
  ['ulp_err_proportion', 'ULP share'],
];

// The twin writes non-finite numbers as strings.
function num(v) {
  if (typeof v === 'number') return v;
  if (v === 'NaN' || v === 'nan') return NaN;
  if (v === 'Infinity' || v === 'inf') return Infinity;
  if (v === '-Infinity' || v === '-inf') return -Infinity;
  return null;
}

function badge(verdict) {
  const v = verdict && verdict.trim() ? verdict : 'none';
  return el('span', { class: `badge level-${VERDICT_LEVEL[verdict] || 'none'}` }, v);
}

function rowsOf(api) {
  return [...(api.rows || [])];
}

// The row that decides an API's verdict: its first row with that verdict.
function worstRow(api) {
  const rows = rowsOf(api);
  return rows.find((r) => r.verdict === api.verdict) || rows[0] || null;
}

async function load(backend) {
  if (backend.embedded) {
    if (!backend.data.precheck) throw new Error('the report holds no precheck result');
    return backend.data.precheck;
  }
  return backend.get('/api/precheck');
}

function summary(doc) {
  const s = doc.summary || {};
  return el('div', { class: 'chips', 'data-testid': 'precheck-summary' },
    el('span', { class: 'chip' }, `${formatCount(s.apis || 0)} APIs`),
    [['error', s.error], ['warning', s.warning], ['pass', s.pass], ['SKIP', s.skip]].map(([v, n]) =>
      el('a', { class: `chip level-text-${VERDICT_LEVEL[v]}`, href: href('precheck', { verdict: v }), 'data-testid': `precheck-count-${v}` },
        `${formatCount(n || 0)} ${v === 'SKIP' ? 'skipped' : v}`)));
}

function distributions(doc, box) {
  // log10 of each output's max absolute error and (1 - cosine), stacked by verdict.
  const buckets = [];
  for (let e = -16; e <= 4; e += 2) buckets.push(e);
  const label = (e) => `1e${e}`;
  const series = (key, transform) => ['error', 'warning', 'pass'].map((verdict) => {
    const counts = buckets.map(() => 0);
    for (const api of doc.apis || []) {
      for (const r of api.rows || []) {
        if (r.verdict !== verdict) continue;
        const v = transform(num(r[key]));
        if (v === null || !Number.isFinite(v)) continue;
        const e = v <= 0 ? -16 : Math.max(-16, Math.min(4, 2 * Math.floor(Math.log10(v) / 2)));
        counts[buckets.indexOf(e)] += 1;
      }
    }
    return { name: verdict, type: 'bar', stack: key, data: counts, itemStyle: { color: LEVEL_COLORS[verdict] } };
  });
  const make = (title, key, transform, testid) => {
    const c = el('div', { class: 'chart small', 'data-testid': testid });
    box.append(el('section', { class: 'card' }, el('h2', {}, title), c));
    chart(c, {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 50, right: 20, top: 30, bottom: 30 },
      xAxis: { type: 'category', data: buckets.map(label) },
      yAxis: { type: 'value', name: 'outputs' },
      series: series(key, transform),
    });
  };
  make('Max absolute error', 'max_abs_err', (v) => v, 'precheck-dist-maxabs');
  make('1 - cosine', 'cosine', (v) => (v === null ? null : 1 - v), 'precheck-dist-cosine');
}

function worstElements(doc, box) {
  const rows = [];
  for (const api of doc.apis || []) {
    for (const r of api.rows || []) {
      const e = num(r.max_abs_err);
      if (r.worst_index >= 0 && e !== null && Number.isFinite(e)) rows.push([api, r, e]);
    }
  }
  rows.sort((a, b) => b[2] - a[2]);
  box.append(el('section', { class: 'card wide' }, el('h2', {}, 'Worst elements'),
    el('table', { class: 'plain', 'data-testid': 'precheck-worst' },
      el('thead', {}, el('tr', {}, ['output', 'verdict', 'index', 'device', 'benchmark', '|difference|'].map((h) => el('th', {}, h)))),
      el('tbody', {}, rows.slice(0, 20).map(([api, r, e]) => el('tr', {},
        el('td', { class: 'mono' }, el('a', { href: href('precheck', { api: api.api }) }, r.name)),
        el('td', {}, badge(r.verdict)),
        el('td', { class: 'num' }, String(r.worst_index)),
        el('td', { class: 'num' }, formatCell(num(r.worst_device))),
        el('td', { class: 'num' }, formatCell(num(r.worst_bench))),
        el('td', { class: 'num' }, formatCell(e))))))));
}

function detail(api) {
  const rows = rowsOf(api);
  return el('section', { class: `card wide level-border-${VERDICT_LEVEL[api.verdict] || 'none'}`, 'data-testid': 'precheck-detail' },
    el('h2', {}, api.api, ' ', badge(api.verdict)),
    el('div', { class: 'muted' }, `forward ${api.forward} · backward ${api.backward.trim() || 'none'}${api.message ? ` · ${api.message}` : ''}`),
    el('div', { style: { overflowX: 'auto' } },
      el('table', { class: 'plain' },
        el('thead', {}, el('tr', {}, ['output', 'dtype', 'shape', 'msprobe status', 'standard', 'standard result', ...METRICS.map(([, t]) => t)].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows.map((r) => el('tr', { class: `level-${VERDICT_LEVEL[r.verdict] || 'none'}` },
          el('td', { class: 'mono' }, r.name),
          el('td', {}, r.device_dtype),
          el('td', {}, r.shape),
          el('td', {}, badge(r.status)),
          el('td', {}, r.standard || ''),
          el('td', {}, r.standard ? badge(r.standard_result) : ''),
          METRICS.map(([k]) => el('td', { class: 'num' }, formatCell(num(r[k]))))))))),
    rows.map((r) => (r.reason || r.message.trim())
      ? el('details', { class: 'reasons' }, el('summary', {}, r.name),
          r.reason ? el('p', {}, r.reason) : null,
          r.message.trim() ? el('pre', {}, r.message.trim()) : null)
      : null));
}

export async function render({ backend, info, params, root }) {
  root.append(el('h1', {}, 'Precheck'));
  if (!info.precheck) {
    root.append(el('p', {}, 'No precheck output (precheck_*.json) was loaded. Run ',
      el('code', {}, 'numprobe precheck -api_info DUMP.json -o DIR'), ' and serve DIR.'));
    return;
  }
  const doc = await load(backend);
  const apis = [...(doc.apis || [])].map((a, i) => ({ ...a, order: i }));
  apis.sort((a, b) => (ORDER[a.verdict] ?? 5) - (ORDER[b.verdict] ?? 5) || a.order - b.order);
  root.append(
    el('div', { class: 'muted' }, `${info.precheck.file} · dump ${doc.dump || ''} · ${doc.mode || ''} mode · seed ${doc.seed ?? ''} · ${doc.device || ''}`),
    summary(doc));
  if (Array.isArray(doc.warnings) && doc.warnings.length) {
    root.append(el('details', { class: 'warnings' }, el('summary', {}, `${doc.warnings.length} warning(s)`), el('ul', {}, doc.warnings.map((w) => el('li', {}, w)))));
  }
  const chosen = apis.find((a) => a.api === params.get('api'));
  if (chosen) root.append(detail(chosen));

  const state = { verdict: params.get('verdict') || '', q: params.get('q') || '' };
  const verdictSelect = el('select', { 'aria-label': 'Verdict', 'data-testid': 'precheck-verdict' },
    ['', 'error', 'warning', 'pass', 'SKIP'].map((v) => el('option', { value: v, selected: v === state.verdict }, v || 'all verdicts')));
  const search = el('input', { type: 'search', placeholder: 'API contains…', value: state.q, 'data-testid': 'precheck-filter' });
  const tableBox = el('div');
  root.append(el('section', { class: 'card wide' }, el('h2', {}, 'APIs, failing first'),
    el('div', { class: 'toolbar' }, verdictSelect, search), tableBox));
  const draw = () => {
    clear(tableBox);
    const shown = apis.filter((a) => (!state.verdict || a.verdict === state.verdict) && (!state.q || a.api.includes(state.q)));
    tableBox.append(el('table', { class: 'plain', 'data-testid': 'precheck-table' },
      el('thead', {}, el('tr', {}, ['verdict', 'API', 'forward', 'backward', 'outputs', 'deciding output', 'cosine', 'max abs err', 'why'].map((h) => el('th', {}, h)))),
      el('tbody', {}, shown.slice(0, 2000).map((a) => {
        const w = worstRow(a);
        const why = w ? (w.standard_result === 'error' ? w.reason : (w.message || '').trim().split('\n').pop()) : a.message;
        return el('tr', { 'data-testid': 'precheck-row', 'data-api': a.api, class: a.api === params.get('api') ? 'selected' : '' },
          el('td', {}, badge(a.verdict)),
          el('td', { class: 'mono' }, el('a', { href: href('precheck', { verdict: state.verdict, q: state.q, api: a.api }) }, a.api)),
          el('td', {}, a.forward),
          el('td', {}, a.backward),
          el('td', { class: 'num' }, String(rowsOf(a).length)),
          el('td', { class: 'mono' }, w ? w.name : ''),
          el('td', { class: 'num' }, w ? formatCell(num(w.cosine)) : ''),
          el('td', { class: 'num' }, w ? formatCell(num(w.max_abs_err)) : ''),
          el('td', {}, why || ''));
      }))));
    if (shown.length > 2000) tableBox.append(el('p', { class: 'muted' }, `${formatCount(shown.length - 2000)} more; narrow the filter`));
  };
  const update = () => {
    state.verdict = verdictSelect.value;
    state.q = search.value.trim();
    replaceParams('precheck', { verdict: state.verdict, q: state.q, api: params.get('api') || '' });
    draw();
  };
  verdictSelect.addEventListener('change', update);
  search.addEventListener('input', debounce(update, 200));
  draw();
  const charts = el('div', { class: 'cards' });
  root.append(charts);
  distributions(doc, charts);
  worstElements(doc, root);
}
