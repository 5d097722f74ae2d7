// Overview: the runs, the first-divergence and first-anomaly cards (one click to the culprit's
// rows), and the counts by result.
import { chart } from '../charts.js';
import { href } from '../router.js';
import { LEVEL_COLORS, el, formatCount, formatNumber, html, levelBadge, shortName } from '../util.js';

const SHOWN_LEVELS = ['error', 'warning', 'unmatched', 'pass'];

function stackBlock(lines) {
  if (!lines || lines.length === 0) return null;
  return el(
    'details',
    { class: 'stack' },
    el('summary', {}, `Stack (${lines.length} frames)`),
    el('pre', {}, lines.join('\n')),
  );
}

function modulePath(runId, path) {
  if (!path || path.length === 0) return null;
  return el(
    'div',
    { class: 'module-path' },
    'in ',
    path.map((m, k) => [k > 0 ? ' › ' : '', el('a', { href: href('tree', { run: runId, node: m }) }, shortName(m))]),
  );
}

function culpritCard(kind, title, run, culprit, note) {
  const firstRow = culprit.rows.length ? culprit.rows[0].i : culprit.first_row;
  const actions = el(
    'div',
    { class: 'actions' },
    el('a', { class: 'button', href: href('table', { run: run.id, op: culprit.op }) }, 'Rows'),
    el('a', { class: 'button', href: href('tree', { run: run.id, node: culprit.op }) }, 'In the tree'),
    run.has_tensors ? el('a', { class: 'button', href: href('tensor', { run: run.id, row: firstRow }) }, 'Tensors') : null,
  );
  return el(
    'section',
    { class: `card culprit level-border-${culprit.level}`, 'data-testid': `${kind}-card` },
    el('h2', {}, title, ' ', levelBadge(culprit.level)),
    el(
      'a',
      { class: 'culprit-op', href: href('table', { run: run.id, op: culprit.op }), 'data-testid': `${kind}-op` },
      culprit.op,
    ),
    el('div', { class: 'muted' }, `run ${run.label} · ${culprit.why}`),
    culprit.rows.length
      ? el(
          'ul',
          { class: 'culprit-rows' },
          culprit.rows.slice(0, 6).map((r) => el('li', {}, el('a', { href: href('table', { run: run.id, op: culprit.op, row: r.i }) }, r.name))),
        )
      : null,
    modulePath(run.id, culprit.module_path),
    stackBlock(culprit.stack),
    note ? el('div', { class: 'note' }, note) : null,
    actions,
  );
}

// Where the error is born, in the user's terms: their own line, and the cast that lost the
// precision when numprobe's capture recorded it (casts.json).
function whereLines(a) {
  if (!a) return [];
  const lines = [];
  if (a.at) lines.push(el('div', { class: 'user-frame', 'data-testid': 'divergence-at' }, 'at ', el('code', {}, a.at)));
  if (a.cast) {
    lines.push(el('div', { class: 'cast', 'data-testid': 'divergence-cast' },
      `precision lost at ${a.cast.name} (${a.cast.from} → ${a.cast.to})`,
      a.cast.at ? [' at ', el('code', {}, a.cast.at)] : null));
  }
  return lines;
}

function analysisLine(a) {
  if (!a) return null;
  const parts = [];
  if (a.rule) parts.push(`rule: ${a.rule}`);
  parts.push(`output error ${formatNumber(a.output_error)} (tolerance ${formatNumber(a.tolerance)})`);
  parts.push(`inputs' error ${formatNumber(a.input_error)}`);
  if (typeof a.growth === 'number' || a.growth === 'inf') parts.push(`growth ${formatNumber(a.growth)}x`);
  if (a.dtypes) parts.push(a.dtypes);
  if (a.non_finite) parts.push('NaN/Inf on one side only');
  return el('div', { class: 'analysis', 'data-testid': 'divergence-analysis' }, parts.join(' · '));
}

function divergenceCard(info, current) {
  const runs = info.runs.filter((r) => r.divergence.length > 0);
  if (runs.length === 0) {
    const analysed = info.runs.filter((r) => r.divergence_source === 'analysis');
    const over = analysed.find((r) => r.first_over_tolerance);
    let text = 'No op introduces an error or a warning: every compared output agrees within the rules.';
    if (analysed.length) text = "numprobe compare's analysis found no op that introduces a divergence.";
    if (info.runs.length === 0) text = 'No compare run loaded.';
    return el(
      'section',
      { class: 'card', 'data-testid': 'first-divergence-card' },
      el('h2', {}, 'First divergence'),
      el('p', {}, text),
      over ? el('p', {}, `The first op over its tolerance (a gradual drift): `, el('a', { href: href('table', { run: over.id, op: over.first_over_tolerance }) }, over.first_over_tolerance)) : null,
    );
  }
  // The earliest run (runs are ordered by step, then rank), unless the selected run has its own.
  const run = runs.find((r) => r.id === current) || runs[0];
  const [first, ...next] = run.divergence;
  let note = 'The first op whose inputs agree with the golden run and whose output does not (forward before backward), read off the Result column (this result has no divergence analysis).';
  if (run.divergence_source === 'analysis') note = "numprobe compare's analysis: the first op, in execution order and forward before backward, where the error is born: its inputs agree and its output does not, an argument differs, it computes in a lower precision than the golden run, or a parameter or data batch differs before any op touched it.";
  else if (run.divergence_fallback) note = 'No op has agreeing inputs and a failing output: this is the first op with an error row.';
  const card = culpritCard('first-divergence', 'First divergence', run, first, note);
  const line = analysisLine(first.analysis);
  if (line) card.querySelector('.muted').after(line, ...whereLines(first.analysis));
  if (next.length) {
    card.append(
      el('div', { class: 'next' }, 'Next candidates: ',
        next.map((c, k) => [k > 0 ? ', ' : '', el('a', { href: href('table', { run: run.id, op: c.op }) }, c.op)])),
    );
  }
  // A precision verdict names where a lower precision starts losing accuracy; the first op whose
  // output fails its own dtype's tolerance can come much later and be in neither line above.
  const over = run.first_over_tolerance;
  if (over && ![first, ...next].some((c) => c.op === over)) {
    card.append(
      el('div', { class: 'next', 'data-testid': 'first-over-tolerance' }, "First output over its dtype's tolerance: ",
        el('a', { href: href('table', { run: run.id, op: over }) }, over)),
    );
  }
  if (runs.length > 1) {
    card.append(
      el('details', { class: 'per-run' }, el('summary', {}, `Per run (${runs.length} runs diverge)`),
        el('ul', {}, runs.map((r) => el('li', {}, `${r.label}: `, el('a', { href: href('table', { run: r.id, op: r.divergence[0].op }) }, r.divergence[0].op))))),
    );
  }
  return card;
}

async function anomalyCard(backend, info, current) {
  if (info.scan) {
    try {
      const scan = await backend.scan();
      const first = scan.first_anomaly || (Array.isArray(scan.anomalies) && scan.anomalies.length ? scan.anomalies[0] : null);
      if (first) {
        const where = [first.scope, first.rank_folder].filter(Boolean).join('/');
        return el(
          'section',
          { class: 'card culprit level-border-error', 'data-testid': 'first-anomaly-card' },
          el('h2', {}, 'First anomaly ', levelBadge('error')),
          el('a', { class: 'culprit-op', href: href('scan', { tab: 'anomalies', anomaly: 0 }), 'data-testid': 'first-anomaly-op' }, first.op_name || '(unnamed op)'),
          el('div', { class: 'muted' }, `${first.kind || 'compute'} · ${where || 'dump'} · from ${scan.file}`),
          modulePath(current, first.module_path),
          stackBlock(first.stack),
          el('div', { class: 'actions' }, el('a', { class: 'button', href: href('scan', { tab: 'anomalies', anomaly: 0 }) }, 'Scan details')),
        );
      }
    } catch (error) {
      return el('section', { class: 'card', 'data-testid': 'first-anomaly-card' }, el('h2', {}, 'First anomaly'), el('p', { class: 'error-box' }, String(error.message)));
    }
  }
  const runs = info.runs.filter((r) => r.first_anomaly);
  if (runs.length) {
    const run = runs.find((r) => r.id === current) || runs[0];
    return culpritCard('first-anomaly', 'First anomaly (NaN/Inf)', run, run.first_anomaly,
      'The first op, in execution order, whose inputs are finite and whose output is not (target statistics).');
  }
  return el(
    'section',
    { class: 'card', 'data-testid': 'first-anomaly-card' },
    el('h2', {}, 'First anomaly'),
    el('p', {}, info.scan ? 'The scan found no NaN/Inf.' : 'No NaN or Inf in the target statistics of these runs.'),
  );
}

function runsTable(info, current) {
  const rows = info.runs.map((r) =>
    el(
      'tr',
      { class: r.id === current ? 'selected' : '' },
      el('td', {}, el('a', { href: href('overview', { run: r.id }) }, r.label)),
      el('td', {}, r.mode),
      el('td', { class: 'num' }, formatCount(r.rows)),
      el('td', { class: 'num' }, formatCount(r.ops)),
      SHOWN_LEVELS.map((l) =>
        el('td', { class: 'num' }, r.counts[l] ? el('a', { href: href('table', { run: r.id, result: l }), class: `count level-text-${l}`, 'data-testid': `count-${l}-${r.id}` }, formatCount(r.counts[l])) : '0'),
      ),
      el('td', { class: 'paths' }, r.golden ? [el('div', {}, `target: ${r.target}`), el('div', {}, `golden: ${r.golden}`)] : r.target),
    ),
  );
  return el(
    'section',
    { class: 'card wide' },
    el('h2', {}, `Runs (${info.runs.length})`),
    el(
      'table',
      { class: 'plain' },
      el('thead', {}, el('tr', {}, ['Run', 'Mode', 'Rows', 'Ops', ...SHOWN_LEVELS, 'Dumps'].map((h) => el('th', {}, h)))),
      el('tbody', {}, rows),
    ),
  );
}

// Rows by result, one group of bars per run (the first COUNT_RUNS runs): a logarithmic scale
// and the count on each bar, so that 3 errors among 1,284 rows show as plainly as the passes.
const COUNT_RUNS = 8;

function countsCard(info) {
  const shown = info.runs.slice(0, COUNT_RUNS);
  const box = el('div', { class: 'chart counts', 'data-testid': 'counts-chart' });
  box.style.height = `${Math.max(120, 36 + shown.length * SHOWN_LEVELS.length * 16)}px`;
  const card = el(
    'section',
    { class: 'card' },
    el('h2', {}, 'Rows by result'),
    box,
    info.runs.length > shown.length ? el('div', { class: 'muted' }, `The first ${shown.length} of ${info.runs.length} runs; the table below lists them all.`) : null,
  );
  // A logarithmic scale drawn on a linear axis: a count n is a bar of 1 + log10(n) units, so a
  // count of 1 is a bar one decade long (ECharts' log axis starts its bars at 1, where a count of
  // 1 has no length); ticks are labelled with the counts they stand for.
  const toBar = (n) => (n > 0 ? 1 + Math.log10(n) : null);
  const largest = Math.max(1, ...shown.flatMap((r) => SHOWN_LEVELS.map((l) => r.counts[l] || 0)));
  const count = (level, index) => shown[index].counts[level] || 0;
  const option = {
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'shadow' },
      formatter: (items) => [html`${items[0].name}`, ...items.map((p) => html`${p.seriesName}: ${formatCount(count(p.seriesName, p.dataIndex))}`)].join('<br>'),
    },
    grid: { left: 10, right: 96, top: 8, bottom: 20, containLabel: true },
    xAxis: { type: 'value', min: 0, max: Math.ceil(toBar(largest * 1.5)), interval: 1, axisLabel: { formatter: (v) => (v === 0 ? '0' : formatCount(10 ** (v - 1))) } },
    yAxis: { type: 'category', data: shown.map((r) => r.label), inverse: true, axisLabel: { width: 120, overflow: 'truncate' } },
    series: SHOWN_LEVELS.map((l) => ({
      name: l,
      type: 'bar',
      barMaxWidth: 14,
      itemStyle: { color: LEVEL_COLORS[l] },
      // Each bar says what it counts (no legend needed): "error 3".
      label: { show: true, position: 'right', fontSize: 11, formatter: (p) => `${l} ${formatCount(count(l, p.dataIndex))}` },
      data: shown.map((r) => toBar(r.counts[l] || 0)),
    })),
  };
  return { card, draw: () => chart(box, option, { renderer: 'svg' }) };
}

export async function render({ backend, info, root, run }) {
  root.append(el('h1', {}, 'Overview'));
  const cards = el('div', { class: 'cards' });
  root.append(cards);
  // The cards that apply to what was loaded: a divergence needs a golden run.
  if (info.kind === 'compare' || info.kind === 'dumps') cards.append(divergenceCard(info, run));
  cards.append(await anomalyCard(backend, info, run));
  if (info.runs.length) {
    const counts = countsCard(info);
    cards.append(counts.card);
    counts.draw();
    root.append(runsTable(info, run));
  }
  if (info.divergence_file) {
    root.append(
      el('section', { class: 'card wide' }, el('h2', {}, 'Divergence analysis file'),
        el('div', { class: 'muted' }, info.divergence_file.file),
        el('details', {}, el('summary', {}, 'Contents'), el('pre', { class: 'json' }, info.divergence_file.text))),
    );
  }
  if (info.warnings.length) {
    root.append(el('section', { class: 'card wide warnings' }, el('h2', {}, 'Warnings'), el('ul', {}, info.warnings.map((w) => el('li', {}, w)))));
  }
}
