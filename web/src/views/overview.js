// Overview: the runs, the first-divergence and first-anomaly cards (one click to the culprit's
// rows), and the counts by result.
import { chart } from '../charts.js';
import { href } from '../router.js';
import { LEVEL_COLORS, el, formatCount, formatNumber, levelBadge, shortName } from '../util.js';

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

export async function render({ backend, info, root, run }) {
  root.append(el('h1', {}, 'Overview'));
  const cards = el('div', { class: 'cards' });
  root.append(cards);
  cards.append(divergenceCard(info, run));
  cards.append(await anomalyCard(backend, info, run));
  if (info.runs.length) {
    const counts = el('div', { class: 'chart small', 'data-testid': 'counts-chart' });
    cards.append(el('section', { class: 'card' }, el('h2', {}, 'Rows by result'), counts));
    const shown = info.runs.slice(0, 64);
    chart(counts, {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 90, right: 16, top: 30, bottom: 24 },
      xAxis: { type: 'value' },
      yAxis: { type: 'category', data: shown.map((r) => r.label), inverse: true },
      series: SHOWN_LEVELS.map((l) => ({
        name: l,
        type: 'bar',
        stack: 'rows',
        itemStyle: { color: LEVEL_COLORS[l] },
        data: shown.map((r) => r.counts[l] || 0),
      })),
    });
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
