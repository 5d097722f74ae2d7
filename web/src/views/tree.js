// Model tree: modules and APIs nested as construct.json records them, each coloured by the worst
// result in its subtree; expandable (children fetched on demand), searchable; selecting a node
// shows its place in a laid-out graph (dagre; panned and zoomed with d3-zoom) and its rows.
import { Graph, layout } from '@dagrejs/dagre';
import { select } from 'd3-selection';
import { zoom, zoomIdentity } from 'd3-zoom';
import { href, replaceParams } from '../router.js';
import { LEVEL_COLORS, clear, debounce, el, formatCell, formatCount, levelBadge, levelDot, shortName } from '../util.js';

const SVG = 'http://www.w3.org/2000/svg';
const GRAPH_NODES = 60;
const GRAPH_HEIGHT = 420;  // px: taller graphs are scaled down to fit, then zoomed

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c);
  return node;
}

export async function render({ backend, info, params, root, run, isCurrent }) {
  const runInfo = info.runs[run];
  if (!runInfo) {
    root.append(el('p', {}, 'No compare run is loaded.'));
    return;
  }
  const state = { node: params.get('node') || '', q: params.get('q') || '' };
  const search = el('input', { type: 'search', placeholder: 'search modules and ops…', value: state.q, 'data-testid': 'tree-search' });
  const hits = el('ul', { class: 'hits', 'data-testid': 'tree-hits' });
  const list = el('ul', { class: 'tree', role: 'tree', 'data-testid': 'tree' });
  const side = el('div', { class: 'tree-side', 'data-testid': 'tree-detail' });
  root.append(
    el('h1', {}, 'Model tree ', el('span', { class: 'muted' }, runInfo.label)),
    el('div', { class: 'tree-layout' }, el('div', { class: 'tree-pane' }, search, hits, list), side),
  );
  const items = new Map();  // name -> {li, children ul, loaded}

  function syncUrl() {
    replaceParams('tree', { run, node: state.node, q: state.q });
  }

  function nodeItem(n) {
    const toggle = el('span', { class: 'twisty' }, n.children ? '▸' : '');
    const label = el(
      'span',
      { class: 'label', title: n.name },
      levelDot(n.worst),
      el('span', { class: 'name' }, shortName(n.name)),
      el('span', { class: 'rows muted' }, n.rows ? formatCount(n.rows) : ''),
    );
    const children = el('ul', { role: 'group', hidden: true });
    const li = el('li', { role: 'treeitem', class: n.name === state.node ? 'selected' : '', dataset: { name: n.name, worst: n.worst }, 'data-testid': 'tree-node' }, el('div', { class: 'node-line' }, toggle, label), children);
    const item = { li, children, toggle, loaded: false, hasChildren: n.children > 0, expanded: false };
    items.set(n.name, item);
    toggle.addEventListener('click', (e) => {
      e.stopPropagation();
      setExpanded(n.name, !item.expanded);
    });
    label.addEventListener('click', () => {
      if (item.hasChildren && !item.expanded) setExpanded(n.name, true);
      selectNode(n.name);
    });
    return li;
  }

  async function loadChildren(name, ul) {
    let offset = 0;
    for (;;) {
      const page = await backend.treeChildren(run, name, offset, 500);
      page.children.forEach((c) => ul.append(nodeItem(c)));
      offset += page.children.length;
      if (offset >= page.total || page.children.length === 0) return page;
      if (offset >= 5000) {
        ul.append(el('li', { class: 'muted' }, `… ${formatCount(page.total - offset)} more (search to find them)`));
        return page;
      }
    }
  }

  async function setExpanded(name, expanded) {
    const item = items.get(name);
    if (!item || !item.hasChildren) return;
    if (expanded && !item.loaded) {
      item.loaded = true;
      await loadChildren(name, item.children);
    }
    item.expanded = expanded;
    item.children.hidden = !expanded;
    item.toggle.textContent = expanded ? '▾' : '▸';
    item.li.setAttribute('aria-expanded', String(expanded));
  }

  async function reveal(name) {
    const page = await backend.treeChildren(run, name, 0, 1);
    for (const ancestor of page.path.slice(0, -1)) {
      await setExpanded(ancestor, true);
    }
    return page;
  }

  async function drawGraph(container, name, selected) {
    // The node, its children and grandchildren (at most GRAPH_NODES), top-down.
    const g = new Graph();
    g.setGraph({ rankdir: 'TB', nodesep: 14, ranksep: 36, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    const nodes = new Map();
    const add = (n) => {
      const text = shortName(n.name) || '(model)';
      const w = Math.min(260, 14 + 7 * text.length);
      nodes.set(n.name, { ...n, text });
      g.setNode(n.name || '(root)', { width: w, height: 30 });
    };
    const top = await backend.treeChildren(run, name, 0, GRAPH_NODES);
    add(top.node);
    const queue = [[top.node.name, top.children]];
    let level = 0;
    while (queue.length && nodes.size < GRAPH_NODES && level < 2) {
      const next = [];
      for (const [parent, children] of queue) {
        for (const c of children) {
          if (nodes.size >= GRAPH_NODES) break;
          add(c);
          g.setEdge(parent || '(root)', c.name);
          if (c.children && level + 1 < 2) next.push([c.name, (await backend.treeChildren(run, c.name, 0, 12)).children]);
        }
      }
      queue.splice(0, queue.length, ...next);
      level++;
    }
    layout(g);
    const graph = g.graph();
    // The graph fits its box (never wider than the pane), and pans (drag) and zooms (wheel,
    // buttons) within it.
    const height = Math.max(160, Math.min(GRAPH_HEIGHT, graph.height));
    const box = svg('svg', { width: '100%', height, 'data-testid': 'tree-graph' });
    const scene = svg('g', { class: 'scene' });
    box.append(scene);
    for (const e of g.edges()) {
      const points = g.edge(e).points.map((p) => `${p.x},${p.y}`).join(' ');
      scene.append(svg('polyline', { points, class: 'edge' }));
    }
    for (const id of g.nodes()) {
      const p = g.node(id);
      const n = nodes.get(id === '(root)' ? '' : id);
      if (!n) continue;
      const group = svg('g', { class: 'gnode', transform: `translate(${p.x - p.width / 2},${p.y - p.height / 2})` });
      group.append(
        svg('rect', { width: p.width, height: p.height, rx: 5, fill: '#fff', stroke: LEVEL_COLORS[n.worst] || '#999', 'stroke-width': n.name === selected ? 3 : 1.5 }),
        svg('rect', { width: 6, height: p.height, rx: 2, fill: LEVEL_COLORS[n.worst] || '#999' }),
      );
      const t = svg('text', { x: 12, y: 19 });
      t.textContent = n.text.length > 34 ? n.text.slice(0, 33) + '…' : n.text;
      group.append(t, svg('title', {}));
      group.lastChild.textContent = `${n.name || '(model)'}: ${n.worst}, ${n.rows} rows`;
      group.addEventListener('click', () => n.name && selectNode(n.name, true));
      scene.append(group);
    }
    const zoomIn = el('button', { type: 'button', title: 'Zoom in', 'data-testid': 'graph-zoom-in' }, '+');
    const zoomOut = el('button', { type: 'button', title: 'Zoom out', 'data-testid': 'graph-zoom-out' }, '−');
    const fitButton = el('button', { type: 'button', title: 'Fit the graph to its box', 'data-testid': 'graph-fit' }, 'Fit');
    container.append(el('div', { class: 'graph-tools' }, zoomIn, zoomOut, fitButton, el('span', { class: 'muted' }, 'drag to pan, wheel to zoom')), box);
    const zoomer = zoom()
      .scaleExtent([0.05, 4])
      .on('zoom', (event) => {
        scene.setAttribute('transform', event.transform.toString());
        box.dataset.scale = String(event.transform.k);
      });
    const view = select(box).call(zoomer);
    const fit = () => {
      const width = box.clientWidth || graph.width;
      const k = Math.min(1, width / graph.width, height / graph.height);
      const x = (width - graph.width * k) / 2;
      const y = (height - graph.height * k) / 2;
      view.call(zoomer.transform, zoomIdentity.translate(x, y).scale(k));
    };
    fit();
    box.dataset.fitScale = box.dataset.scale;
    zoomIn.addEventListener('click', () => view.call(zoomer.scaleBy, 1.25));
    zoomOut.addEventListener('click', () => view.call(zoomer.scaleBy, 0.8));
    fitButton.addEventListener('click', fit);
  }

  async function selectNode(name, revealIt = false) {
    state.node = name;
    syncUrl();
    if (revealIt) await reveal(name);
    for (const item of items.values()) item.li.classList.toggle('selected', item.li.dataset.name === name);
    clear(side);
    const page = await backend.treeChildren(run, name, 0, 0);
    if (!isCurrent() || state.node !== name) return;
    const n = page.node;
    const graph = el('div', { class: 'graph' });
    const rows = el('div', { class: 'node-rows', 'data-testid': 'node-rows' });
    side.append(
      el('h2', {}, shortName(n.name), ' ', levelBadge(n.worst)),
      el('div', { class: 'muted mono' }, n.name || '(the whole model)'),
      el('div', {}, `${formatCount(n.rows)} rows`, n.children ? `, ${formatCount(n.children)} children` : ''),
      el('div', { class: 'actions' }, el('a', { class: 'button', href: href('table', { run, node: n.name }), 'data-testid': 'open-node-rows' }, 'Open these rows in the table')),
      graph,
      el('h3', {}, 'Rows'),
      rows,
    );
    // A leaf is drawn among its siblings: the graph starts at its parent.
    const path = page.path;
    await drawGraph(graph, n.children ? name : path.length >= 2 ? path[path.length - 2] : '', name);
    const data = await backend.rows({ run, node: name, limit: 100 });
    const nameCol = runInfo.page_columns.map((c) => runInfo.columns[c]).indexOf('NPU Name');
    const metricNames = ['Cosine', 'MaxAbsErr', 'MaxRelativeErr', 'Max diff', 'MeanRelativeErr', 'NPU max'];
    const cols = runInfo.page_columns.map((c) => runInfo.columns[c]);
    const shown = metricNames.filter((m) => cols.includes(m)).slice(0, 3);
    rows.append(
      el(
        'div',
        {},
        el(
        'table',
        { class: 'plain' },
        el('thead', {}, el('tr', {}, el('th', {}, 'Row'), shown.map((m) => el('th', {}, m)), el('th', {}, 'Result'))),
        el(
          'tbody',
          {},
          data.rows.map((r) =>
            el(
              'tr',
              { class: `level-${r.l}`, 'data-testid': 'node-row' },
              el('td', {}, el('a', { href: href('table', { run, node: name, row: r.i }) }, String(r.c[Math.max(0, nameCol)]))),
              shown.map((m) => el('td', { class: 'num' }, formatCell(r.c[cols.indexOf(m)]))),
              el('td', {}, levelBadge(r.l)),
            ),
          ),
        ),
      ),
      data.total > data.rows.length ? el('p', { class: 'muted' }, `… and ${formatCount(data.total - data.rows.length)} more in the table`) : null,
      ),
    );
  }

  async function runSearch() {
    state.q = search.value.trim();
    syncUrl();
    clear(hits);
    if (!state.q) return;
    const result = await backend.treeSearch(run, state.q, 50);
    for (const h of result.hits) {
      hits.append(
        el('li', { 'data-testid': 'tree-hit' }, levelDot(h.worst), el('a', { href: '#', onclick: (e) => { e.preventDefault(); selectNode(h.name, true); } }, shortName(h.name)), el('span', { class: 'muted' }, ` ${h.rows}`)),
      );
    }
    if (result.hits.length === 0) hits.append(el('li', { class: 'muted' }, 'no match'));
    if (result.truncated) hits.append(el('li', { class: 'muted' }, 'more matches: refine the search'));
  }

  search.addEventListener('input', debounce(runSearch, 250));
  const rootPage = await loadChildren('', list);
  if (!rootPage.nested) {
    list.before(el('p', { class: 'note' }, 'No construct.json was found for this run: ops are listed flat, in execution order.'));
  }
  if (state.q) await runSearch();
  if (state.node) await selectNode(state.node, true);
  else if (rootPage.children.length) await selectNode('', false);
}
