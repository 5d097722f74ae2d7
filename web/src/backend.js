// Where the views get their data: the numprobe server's JSON API, or, in a self-contained report,
// the data embedded in the page (<script type="application/json" id="numprobe-data">), queried in
// the browser with the same semantics. Both backends expose the same async methods.
import { LocalTable } from './query.js';
import { LEVELS, parsePyStrList } from './util.js';

export class HttpBackend {
  constructor() {
    this.embedded = false;
  }

  async get(path, params = {}) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null || value === '') continue;
      if (Array.isArray(value)) value.forEach((v) => search.append(key, v));
      else search.set(key, String(value));
    }
    const response = await fetch(`${path}?${search}`, { headers: { Accept: 'application/json' } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  info() {
    return this.get('/api/info');
  }
  omitted() {
    return null;
  }
  rows(params) {
    return this.get('/api/rows', params);
  }
  row(run, row) {
    return this.get('/api/row', { run, row });
  }
  treeChildren(run, node, offset = 0, limit = 500) {
    return this.get('/api/tree', { run, node, offset, limit });
  }
  treeSearch(run, q, limit = 50) {
    return this.get('/api/tree/search', { run, q, limit });
  }
  tensor(run, row, slice = 0) {
    return this.get('/api/tensor', { run, row, slice });
  }
  trend(run, name, column) {
    return this.get('/api/trend', { run, name, column });
  }
  heatmap(run, column, limit = 200) {
    return this.get('/api/heatmap', { run, column, limit });
  }
  scan() {
    return this.get('/api/scan');
  }
  scanHeadroom(params) {
    return this.get('/api/scan/headroom', params);
  }
}

function nodeSummary(nodes, id) {
  const n = nodes[id];
  return { name: n[0], worst: n[2], rows: n[3], children: n[7].length, entry: n[4] >= 0 };
}

function pathTo(nodes, id) {
  const path = [];
  for (let n = id; n > 0; n = nodes[n][1]) path.push(n);
  return path.reverse();
}

export class EmbeddedBackend {
  constructor(data) {
    this.embedded = true;
    this.data = data;
    this.tables = new Map();
  }

  table(run) {
    const id = Number(run || 0);
    const runs = this.data.info.runs;
    if (!Number.isInteger(id) || id < 0 || id >= runs.length) throw new Error('no such run');
    if (!this.tables.has(id)) this.tables.set(id, new LocalTable(this.data.runs[id], runs[id]));
    return this.tables.get(id);
  }

  async info() {
    return this.data.info;
  }

  async rows(params) {
    const t = this.table(params.run);
    const view = t.select({
      result: params.result || '',
      q: params.q || '',
      range: params.range || [],
      node: params.node || '',
      op: params.op || '',
      sort: params.sort || '',
      desc: params.desc || '',
    });
    const offset = Number(params.offset || 0);
    const limit = Math.min(1000, Number(params.limit || 100));
    const pageColumns = t.info.page_columns;
    const rows = view.slice(offset, offset + limit).map((i) => ({
      i: t.originalRow(i),
      l: LEVELS[t.data.levels[i]],
      c: pageColumns.map((c) => t.data.rows[i][c]),
    }));
    return { total: view.length, offset, rows };
  }

  // When the report left rows of this run out: {shown, total, command}; null otherwise.
  omitted(run) {
    const t = this.table(run);
    if (!t.rowIndex) return null;
    return { shown: t.rowIndex.length, total: t.info.rows, command: `numprobe serve ${this.data.full_result}` };
  }

  async row(run, row) {
    const t = this.table(run);
    const i = t.position(Number(row));
    if (i === undefined) {
      if (t.rowIndex && Number(row) >= 0 && Number(row) < t.info.rows) throw new Error(`row ${row} is not embedded in this report; open the full result with: numprobe serve ${this.data.full_result}`);
      throw new Error('no such row');
    }
    const cells = [];
    let stack = [];
    const entry = t.data.row_entry[i];
    const stackColumn = t.columns.indexOf('NPU_Stack_Info');
    t.columns.forEach((name, c) => {
      if (c !== stackColumn) cells.push([name, t.data.rows[i][c]]);
    });
    if (stackColumn >= 0) {
      for (let r = 0; r < t.data.rows.length && stack.length === 0; r++) {
        if (t.data.row_entry[r] !== entry) continue;
        const text = t.data.rows[r][stackColumn];
        if (typeof text === 'string' && text && text !== 'N/A') stack = parsePyStrList(text) || [text];
      }
    }
    const op = t.data.entries[entry];
    const node = t.nodeByName.get(op);
    const modulePath = node === undefined ? [] : pathTo(t.nodes, node).slice(0, -1).map((n) => t.nodes[n][0]);
    return {
      i: t.originalRow(i),
      level: LEVELS[t.data.levels[i]],
      op,
      cells,
      module_path: modulePath,
      stack,
      tensor: String(t.originalRow(i)) in t.data.tensors,
    };
  }

  async treeChildren(run, name, offset = 0, limit = 500) {
    const t = this.table(run);
    const id = name ? t.nodeByName.get(name) : 0;
    if (id === undefined) throw new Error('unknown tree node');
    const node = t.nodes[id];
    return {
      nested: this.data.runs[Number(run || 0)].tree.nested,
      node: nodeSummary(t.nodes, id),
      path: pathTo(t.nodes, id).map((n) => t.nodes[n][0]),
      total: node[7].length,
      children: node[7].slice(offset, offset + limit).map((c) => nodeSummary(t.nodes, c)),
    };
  }

  async treeSearch(run, q, limit = 50) {
    const t = this.table(run);
    const needle = q.toLowerCase();
    const hits = [];
    for (let i = 1; i < t.nodes.length; i++) if (t.nodes[i][0].toLowerCase().includes(needle)) hits.push(i);
    hits.sort((a, b) => t.nodes[a][5] - t.nodes[b][5]);
    return {
      truncated: hits.length > limit,
      hits: hits.slice(0, limit).map((id) => ({
        name: t.nodes[id][0],
        worst: t.nodes[id][2],
        rows: t.nodes[id][3],
        path: pathTo(t.nodes, id).map((n) => t.nodes[n][0]),
      })),
    };
  }

  async tensor(run, row, slice = 0) {
    const t = this.table(run);
    const detail = t.data.tensors[String(row)];
    if (!detail) throw new Error('the tensor detail of this row is not embedded in the report (only the most relevant rows are)');
    if (Number(slice) !== 0) throw new Error('the report embeds the first 2-D slice only');
    return detail;
  }

  async trend(run, name, column) {
    const runs = this.data.info.runs;
    const base = runs[Number(run || 0)];
    const seriesKey = (r) => `${r.scope.replace(/step\d+/g, 'step*')}|${r.rank_folder}`;
    const points = [];
    runs.forEach((r, i) => {
      if (seriesKey(r) !== seriesKey(base)) return;
      const t = this.table(i);
      const c = t.columns.indexOf(column);
      const row = t.findByName(name);
      points.push({
        run: i,
        label: r.label,
        step: r.step,
        value: c >= 0 && row !== undefined ? t.data.rows[row][c] : null,
        level: row !== undefined ? LEVELS[t.data.levels[row]] : 'none',
      });
    });
    return { name, column, points };
  }

  async heatmap(run, column, limit = 200) {
    const runs = this.data.info.runs;
    const scope = runs[Number(run || 0)].scope;
    const lowerWorse = column === 'Cosine';
    const ranks = [];
    const ops = [];
    const opIndex = new Map();
    const values = [];
    runs.forEach((r, i) => {
      if (r.scope !== scope) return;
      ranks.push({ run: i, label: r.rank_folder || r.label });
      const t = this.table(i);
      const c = t.columns.indexOf(column);
      const agg = new Map();
      t.data.rows.forEach((cells, k) => {
        const op = t.data.entries[t.data.row_entry[k]];
        if (!opIndex.has(op)) {
          opIndex.set(op, ops.length);
          ops.push(op);
        }
        const v = c >= 0 ? cells[c] : null;
        if (typeof v !== 'number') return;
        const old = agg.get(op);
        if (old === undefined || (lowerWorse ? v < old : v > old)) agg.set(op, v);
      });
      values.push(agg);
    });
    let keep = ops.map((_, k) => k);
    if (ops.length > limit) {
      const score = ops.map((op) => {
        let worst = null;
        for (const agg of values) {
          const v = agg.get(op);
          if (v === undefined) continue;
          if (worst === null || (lowerWorse ? v < worst : v > worst)) worst = v;
        }
        return worst === null ? -Infinity : lowerWorse ? -worst : worst;
      });
      keep = keep.sort((a, b) => score[b] - score[a] || a - b).slice(0, limit).sort((a, b) => a - b);
    }
    return {
      column,
      scope,
      total_ops: ops.length,
      ranks,
      ops: keep.map((k) => ops[k]),
      values: values.map((agg) => keep.map((k) => (agg.has(ops[k]) ? agg.get(ops[k]) : null))),
    };
  }

  async scan() {
    if (!this.data.scan) throw new Error('no scan output was loaded');
    const scan = { file: this.data.info.scan ? this.data.info.scan.file : '', ...this.data.scan };
    if (scan.headroom && typeof scan.headroom === 'object') {
      const { flagged, ...rest } = scan.headroom;
      scan.headroom = { ...rest, flagged_count: Array.isArray(flagged) ? flagged.length : 0 };
    }
    return scan;
  }

  async scanHeadroom(params) {
    if (!this.data.scan) throw new Error('no scan output was loaded');
    const headroom = this.data.scan.headroom;
    let rows = headroom && Array.isArray(headroom.flagged) ? headroom.flagged : [];
    if (params.q) rows = rows.filter((r) => typeof r.tensor === 'string' && r.tensor.includes(params.q));
    if (params.overflow === '1') rows = rows.filter((r) => Object.values(r.fits || {}).some((f) => f && f.overflow === true));
    const offset = Number(params.offset || 0);
    const limit = Math.min(1000, Number(params.limit || 100));
    return { total: rows.length, rows: rows.slice(offset, offset + limit) };
  }
}

export function makeBackend() {
  const embedded = document.getElementById('numprobe-data');
  if (embedded) return new EmbeddedBackend(JSON.parse(embedded.textContent));
  return new HttpBackend();
}
