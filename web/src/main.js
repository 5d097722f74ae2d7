// numprobe's web UI: a shell (navigation, run selector) and one view per hash route. The same
// code runs against the numprobe server and inside a self-contained report.
import './style.css';
import { makeBackend } from './backend.js';
import { disposeCharts } from './charts.js';
import { currentRoute, go, href } from './router.js';
import { clear, el } from './util.js';
import * as overview from './views/overview.js';
import * as tree from './views/tree.js';
import * as table from './views/table.js';
import * as tensor from './views/tensor.js';
import * as trends from './views/trends.js';
import * as scan from './views/scan.js';
import * as precheck from './views/precheck.js';

const VIEWS = { overview, tree, table, tensor, trends, scan, precheck };
const TITLES = {
  overview: 'Overview',
  tree: 'Model tree',
  table: 'Compare table',
  tensor: 'Tensor',
  trends: 'Trends',
  scan: 'Scan',
  precheck: 'Precheck',
};

const backend = makeBackend();
let info = null;
let cleanup = null;
let generation = 0;

function shell() {
  const app = document.getElementById('app');
  clear(app);
  const nav = el('nav', { class: 'views' });
  for (const [name, title] of Object.entries(TITLES)) {
    nav.append(el('a', { href: href(name), dataset: { view: name }, 'data-testid': `nav-${name}` }, title));
  }
  const runSelect = el('select', { id: 'run-select', 'aria-label': 'Run', 'data-testid': 'run-select' });
  runSelect.addEventListener('change', () => {
    const { view, params } = currentRoute();
    const next = Object.fromEntries(params.entries());
    next.run = runSelect.value;
    delete next.row;
    delete next.node;
    delete next.op;
    go(view === 'tensor' ? 'table' : view, next);
  });
  const where = backend.embedded ? 'report' : 'served';
  const header = el(
    'header',
    { class: 'top' },
    el('a', { class: 'brand', href: href('overview') }, 'numprobe'),
    nav,
    el('label', { class: 'run-picker' }, 'Run ', runSelect),
    el('span', { class: 'source', title: info.paths.join('\n') }, `${where}: ${info.paths.join(' vs ')}`),
  );
  const main = el('main', { id: 'view' });
  app.append(header, main);
  for (const run of info.runs) {
    runSelect.append(el('option', { value: run.id }, `${run.label} (${run.mode})`));
  }
  if (info.runs.length === 0) runSelect.append(el('option', { value: '' }, 'no compare runs'));
}

async function render() {
  const mine = ++generation;
  const { view, params } = currentRoute();
  document.body.dataset.ready = '0';
  document.body.dataset.view = view;
  for (const a of document.querySelectorAll('nav.views a')) a.classList.toggle('active', a.dataset.view === view);
  const runSelect = document.getElementById('run-select');
  const run = Math.min(Math.max(0, Number(params.get('run') || 0) || 0), Math.max(0, info.runs.length - 1));
  if (info.runs.length) runSelect.value = String(run);
  if (cleanup) cleanup();
  cleanup = null;
  disposeCharts();
  const root = clear(document.getElementById('view'));
  root.className = `view view-${view}`;
  try {
    const result = await VIEWS[view].render({ backend, info, params, root, run, isCurrent: () => mine === generation });
    if (typeof result === 'function') cleanup = result;
  } catch (error) {
    root.append(el('div', { class: 'error-box', 'data-testid': 'error' }, String(error.message || error)));
  }
  if (mine === generation) {
    document.body.dataset.route = location.hash;
    document.body.dataset.ready = '1';
  }
}

async function start() {
  try {
    info = await backend.info();
  } catch (error) {
    document.getElementById('app').append(el('div', { class: 'error-box' }, `cannot load: ${error.message}`));
    return;
  }
  document.title = backend.embedded ? 'numprobe report' : 'numprobe';
  shell();
  window.addEventListener('hashchange', render);
  await render();
}

start();
