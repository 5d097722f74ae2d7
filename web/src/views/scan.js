// Scan: the anomalies (the first op whose output went NaN/Inf, with its inputs and outputs), the
// watchpoint hits, and the precision headroom per target dtype, from `numprobe scan`'s JSON.
import { chart } from '../charts.js';
import { href, replaceParams } from '../router.js';
import { LEVEL_COLORS, clear, debounce, el, formatCell, formatCount, formatNumber, shortName } from '../util.js';

const TABS = [
  ['anomalies', 'Anomalies'],
  ['watchpoints', 'Watchpoints'],
  ['headroom', 'Headroom'],
];

function where(x) {
  return [x.scope, x.rank_folder].filter(Boolean).join('/') || (x.step >= 0 ? `step ${x.step}` : '');
}

function tensorTable(title, tensors) {
  if (!Array.isArray(tensors) || tensors.length === 0) return null;
  return [
    el('h3', {}, title),
    el('table', { class: 'plain' },
      el('thead', {}, el('tr', {}, ['name', 'dtype', 'shape', 'max', 'min', 'mean', 'norm', 'NaN/Inf'].map((h) => el('th', {}, h)))),
      el('tbody', {}, tensors.map((t) => el('tr', { class: t.nonfinite ? 'level-error' : '' },
        el('td', { class: 'mono' }, t.name || ''),
        el('td', {}, t.dtype || ''),
        el('td', {}, t.shape || ''),
        ['max', 'min', 'mean', 'norm'].map((k) => el('td', { class: 'num' }, formatCell(t[k]))),
        el('td', {}, t.nonfinite ? 'yes' : ''))))),
  ];
}

function anomaliesTab(scan, params, box) {
  const anomalies = Array.isArray(scan.anomalies) ? scan.anomalies : scan.first_anomaly ? [scan.first_anomaly] : [];
  if (anomalies.length === 0) {
    box.append(el('p', { 'data-testid': 'no-anomaly' }, scan.md5_mode ? 'An md5 dump has no statistics: no finiteness check was possible.' : 'No op produced a NaN or Inf.'));
    return;
  }
  const k = Math.min(anomalies.length - 1, Math.max(0, Number(params.get('anomaly') || 0)));
  const a = anomalies[k];
  box.append(
    el('section', { class: 'card wide culprit level-border-error', 'data-testid': 'anomaly-detail' },
      el('h2', {}, k === 0 ? 'First anomaly' : `Anomaly ${k + 1}`),
      el('div', { class: 'culprit-op mono', 'data-testid': 'anomaly-op' }, a.op_name || ''),
      el('div', { class: 'muted' }, `${a.kind || ''} · ${where(a)}${a.entry_index !== undefined ? ` · entry ${a.entry_index}` : ''}`),
      Array.isArray(a.module_path) && a.module_path.length ? el('div', { class: 'module-path' }, 'in ', a.module_path.map((m, j) => [j ? ' › ' : '', shortName(m)])) : null,
      Array.isArray(a.stack) && a.stack.length ? el('details', { class: 'stack' }, el('summary', {}, `Stack (${a.stack.length} frames)`), el('pre', {}, a.stack.join('\n'))) : null,
      tensorTable('Inputs', a.inputs),
      tensorTable('Outputs', a.outputs)),
  );
  box.append(
    el('section', { class: 'card wide' }, el('h2', {}, `All anomalies (${anomalies.length})`),
      el('table', { class: 'plain' },
        el('thead', {}, el('tr', {}, ['#', 'kind', 'where', 'op'].map((h) => el('th', {}, h)))),
        el('tbody', {}, anomalies.map((x, j) => el('tr', { class: j === k ? 'selected' : '' },
          el('td', {}, String(j + 1)), el('td', {}, x.kind || ''), el('td', {}, where(x)),
          el('td', {}, el('a', { href: href('scan', { tab: 'anomalies', anomaly: j }) }, x.op_name || '(unnamed)'))))))),
  );
}

function watchpointsTab(scan, box) {
  const wp = scan.watchpoints && typeof scan.watchpoints === 'object' ? scan.watchpoints : {};
  const hits = Array.isArray(wp.hits) ? wp.hits : [];
  const enabled = Array.isArray(wp.enabled) ? wp.enabled : [];
  if (enabled.length) box.append(el('div', { class: 'muted' }, `Watching: ${enabled.join(', ')}`));
  if (hits.length === 0) {
    box.append(el('p', { 'data-testid': 'no-hits' }, 'No watchpoint was hit.'));
    return;
  }
  const counts = new Map();
  for (const h of hits) counts.set(h.watchpoint, (counts.get(h.watchpoint) || 0) + 1);
  box.append(
    el('div', { class: 'chips', 'data-testid': 'watchpoint-counts' }, [...counts].map(([w, n]) => el('span', { class: 'chip' }, `${w}: ${n}`))),
    el('table', { class: 'plain', 'data-testid': 'watchpoints' },
      el('thead', {}, el('tr', {}, ['watchpoint', 'where', 'tensor', 'condition', 'actual', 'threshold', 'from'].map((h) => el('th', {}, h)))),
      el('tbody', {}, hits.map((h) => el('tr', {},
        el('td', {}, h.watchpoint || ''), el('td', {}, where(h)), el('td', { class: 'mono' }, h.tensor || ''),
        el('td', {}, h.condition || ''), el('td', { class: 'num' }, formatCell(h.actual)), el('td', { class: 'num' }, formatCell(h.threshold)),
        el('td', {}, h.exact ? 'tensor data' : 'statistics'))))),
  );
}

async function headroomTab(backend, scan, params, box) {
  const headroom = scan.headroom && typeof scan.headroom === 'object' ? scan.headroom : {};
  const summary = Array.isArray(headroom.summary) ? headroom.summary : [];
  const targets = Array.isArray(headroom.targets) ? headroom.targets : summary.map((s) => s.target);
  if (summary.length) {
    const chartBox = el('div', { class: 'chart small', 'data-testid': 'headroom-chart' });
    box.append(el('section', { class: 'card wide' }, el('h2', {}, 'Tensors that would not fit'), chartBox));
    chart(chartBox, {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 60, right: 20, top: 30, bottom: 30 },
      xAxis: { type: 'category', data: targets },
      yAxis: { type: 'value', name: 'tensors' },
      series: [
        { name: 'overflow', type: 'bar', data: summary.map((s) => s.overflow || 0), itemStyle: { color: LEVEL_COLORS.error } },
        { name: 'underflow', type: 'bar', data: summary.map((s) => s.underflow || 0), itemStyle: { color: LEVEL_COLORS.warning } },
        { name: 'subnormal', type: 'bar', data: summary.map((s) => s.subnormal || 0), itemStyle: { color: LEVEL_COLORS.unmatched } },
      ],
    });
    for (const s of summary) {
      const keep = Array.isArray(s.keep_higher_precision) ? s.keep_higher_precision : [];
      box.append(
        el('section', { class: 'card' }, el('h2', {}, `${s.target}: keep in higher precision`),
          el('div', { class: 'muted' }, `${formatCount(s.tensors || 0)} tensors judged · ${formatCount(s.overflow || 0)} overflow · ${formatCount(s.underflow || 0)} underflow · ${formatCount(s.subnormal || 0)} subnormal`),
          keep.length
            ? el('table', { class: 'plain', 'data-testid': `keep-${s.target}` },
                el('thead', {}, el('tr', {}, ['layer', 'tensors', 'max |x|', 'headroom (log2)', 'worst tensor'].map((h) => el('th', {}, h)))),
                el('tbody', {}, keep.map((l) => el('tr', {}, el('td', { class: 'mono' }, l.layer), el('td', { class: 'num' }, formatCount(l.tensors)),
                  el('td', { class: 'num' }, formatCell(l.max_abs)), el('td', { class: 'num' }, formatCell(l.worst_headroom_log2)), el('td', { class: 'mono' }, l.worst_tensor || '')))))
            : el('p', {}, 'Every tensor fits.')),
      );
    }
  }
  // Per-tensor rows, paged by the server.
  const state = { q: params.get('q') || '', overflow: params.get('overflow') || '', offset: 0 };
  const q = el('input', { type: 'search', placeholder: 'tensor contains…', value: state.q, 'data-testid': 'headroom-filter' });
  const only = el('input', { type: 'checkbox', checked: state.overflow === '1', 'data-testid': 'headroom-overflow' });
  const table = el('div', { 'data-testid': 'headroom-rows' });
  const more = el('button', { type: 'button' }, 'More');
  box.append(el('section', { class: 'card wide' }, el('h2', {}, 'Tensors that overflow or underflow somewhere'), el('div', { class: 'toolbar' }, q, el('label', {}, only, ' overflowing only')), table, more));
  let body = null;
  async function load(reset) {
    if (reset) {
      state.offset = 0;
      clear(table);
      body = el('tbody');
      table.append(el('table', { class: 'plain' },
        el('thead', {}, el('tr', {}, ['tensor', 'layer', 'dtype', 'max |x|', 'min non-zero |x|', ...targets.map((t) => `${t} (log2 headroom)`)].map((h) => el('th', {}, h)))), body));
    }
    const page = await backend.scanHeadroom({ q: state.q, overflow: state.overflow, offset: state.offset, limit: 100 });
    for (const r of page.rows) {
      body.append(el('tr', {},
        el('td', { class: 'mono' }, r.tensor || ''), el('td', { class: 'mono' }, r.layer || ''), el('td', {}, r.dtype || ''),
        el('td', { class: 'num' }, formatCell(r.max_abs)), el('td', { class: 'num' }, formatCell(r.min_nonzero_abs)),
        targets.map((t) => {
          const f = (r.fits || {})[t] || {};
          const text = f.status && f.status !== 'ok' ? `${f.status} (${formatNumber(f.headroom_log2)})` : formatNumber(f.headroom_log2);
          return el('td', { class: `num ${f.overflow ? 'level-text-error' : f.underflow ? 'level-text-warning' : ''}` }, text);
        })));
    }
    state.offset += page.rows.length;
    more.hidden = state.offset >= page.total;
    more.textContent = `More (${formatCount(page.total - state.offset)} left)`;
  }
  const reload = () => {
    state.q = q.value.trim();
    state.overflow = only.checked ? '1' : '';
    replaceParams('scan', { tab: 'headroom', q: state.q, overflow: state.overflow });
    load(true);
  };
  q.addEventListener('input', debounce(reload, 250));
  only.addEventListener('change', reload);
  more.addEventListener('click', () => load(false));
  await load(true);
}

export async function render({ backend, info, params, root }) {
  root.append(el('h1', {}, 'Scan'));
  if (!info.scan) {
    root.append(el('p', {}, 'No scan output (scan_*.json) was loaded. Run ', el('code', {}, 'numprobe scan DUMP -o DIR'), ' and serve DIR.'));
    return;
  }
  const scan = await backend.scan();
  const tab = TABS.some(([t]) => t === params.get('tab')) ? params.get('tab') : 'anomalies';
  root.append(
    el('div', { class: 'muted' }, `${scan.file} · dump ${scan.dump || ''} · task ${scan.task || ''} · ${formatCount(scan.entries || 0)} entries, ${formatCount(scan.tensors || 0)} tensors, ${formatCount(scan.ranks || 0)} rank(s)${Array.isArray(scan.steps) && scan.steps.length ? `, ${scan.steps.join(', ')}` : ''}`),
    el('nav', { class: 'tabs' }, TABS.map(([t, title]) => el('a', { href: href('scan', { tab: t }), class: t === tab ? 'active' : '', 'data-testid': `scan-tab-${t}` }, title))),
  );
  if (Array.isArray(scan.warnings) && scan.warnings.length) {
    root.append(el('details', { class: 'warnings' }, el('summary', {}, `${scan.warnings.length} warning(s)`), el('ul', {}, scan.warnings.map((w) => el('li', {}, w)))));
  }
  const box = el('div', { class: 'scan-tab' });
  root.append(box);
  if (tab === 'anomalies') anomaliesTab(scan, params, box);
  else if (tab === 'watchpoints') watchpointsTab(scan, box);
  else await headroomTab(backend, scan, params, box);
}
