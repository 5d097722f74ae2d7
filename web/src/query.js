// The compare-table queries of the server's ResultStore, in JavaScript, for the self-contained
// report (which has no server): the same filters (result levels, a case-insensitive name
// substring or '*'/'?' glob, numeric ranges, a tree node's subtree, one op) and the same order
// (numbers first by value, then texts, each in the chosen direction; ties in execution order).
import { LEVELS } from './util.js';

function globToRegExp(pattern) {
  let re = '';
  for (const c of pattern) {
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

function compareTexts(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class LocalTable {
  constructor(runData, runInfo) {
    this.data = runData;
    this.info = runInfo;
    this.columns = runInfo.columns;
    this.nameColumn = Math.max(0, this.columns.indexOf('NPU Name'));
    this.sortCache = new Map();
    this.viewCache = new Map();
    this.nodes = runData.tree.nodes;
    this.nodeByName = new Map(this.nodes.map((n, i) => [n[0], i]));
    this.entryPosition = new Array(runData.entries.length).fill(0);
    for (const n of this.nodes) if (n[4] >= 0) this.entryPosition[n[4]] = n[5];
    this.entryIndex = new Map(runData.entries.map((e, i) => [e, i]));
    this.byName = null;
    // A report whose table was capped embeds a sample of the rows: row_index[k] is the k-th
    // embedded row's index in the full table (the index the links, the tensors and the server use).
    this.rowIndex = Array.isArray(runData.row_index) ? runData.row_index : null;
    this.positionOf = this.rowIndex ? new Map(this.rowIndex.map((r, k) => [r, k])) : null;
  }

  // The full table's index of embedded row `k`, and back (undefined when not embedded).
  originalRow(k) {
    return this.rowIndex ? this.rowIndex[k] : k;
  }
  position(row) {
    if (this.positionOf) return this.positionOf.get(row);
    return Number.isInteger(row) && row >= 0 && row < this.data.rows.length ? row : undefined;
  }

  sortOrder(column, descending) {
    const key = `${column}:${descending ? 1 : 0}`;
    if (this.sortCache.has(key)) return this.sortCache.get(key);
    const rows = this.data.rows;
    const order = rows.map((_, i) => i);
    const sign = descending ? -1 : 1;
    order.sort((a, b) => {
      const va = rows[a][column];
      const vb = rows[b][column];
      const ta = typeof va !== 'number';
      const tb = typeof vb !== 'number';
      if (ta !== tb) return ta ? 1 : -1;
      const c = ta ? compareTexts(String(va), String(vb)) : va < vb ? -1 : va > vb ? 1 : 0;
      return c !== 0 ? sign * c : a - b;
    });
    this.sortCache.set(key, order);
    return order;
  }

  // params: {result, q, range (string or array), node, op, sort, desc}
  select(params) {
    const key = JSON.stringify(params);
    if (this.viewCache.has(key)) return this.viewCache.get(key);
    const rows = this.data.rows;
    const levels = params.result ? params.result.split(',') : [];
    for (const l of levels) if (!LEVELS.includes(l)) throw new Error(`unknown result '${l}'`);
    const pattern = (params.q || '').toLowerCase();
    const glob = /[*?]/.test(pattern) ? globToRegExp(pattern) : null;
    const ranges = [];
    const rawRanges = params.range ? (Array.isArray(params.range) ? params.range : [params.range]) : [];
    for (const r of rawRanges) {
      const parts = r.split(':');
      if (parts.length !== 3) throw new Error('range must be COLUMN:MIN:MAX');
      const column = this.columns.indexOf(parts[0]);
      if (column < 0) throw new Error(`unknown column '${parts[0]}'`);
      const bound = (t) => {
        if (t === '') return null;
        const v = Number(t);
        if (Number.isNaN(v)) throw new Error(`'${t}' is not a number`);
        return v;
      };
      ranges.push({ column, min: bound(parts[1]), max: bound(parts[2]) });
    }
    let span = null;
    if (params.node) {
      const id = this.nodeByName.get(params.node);
      if (id === undefined) throw new Error(`unknown tree node '${params.node}'`);
      span = [this.nodes[id][5], this.nodes[id][6]];
    }
    let entry = null;
    if (params.op) {
      entry = this.entryIndex.get(params.op);
      if (entry === undefined) throw new Error(`unknown op '${params.op}'`);
    }
    let order = null;
    if (params.sort) {
      const column = this.columns.indexOf(params.sort);
      if (column < 0) throw new Error(`unknown column '${params.sort}'`);
      order = this.sortOrder(column, params.desc === '1');
    }
    const view = [];
    const n = rows.length;
    for (let k = 0; k < n; k++) {
      const i = order ? order[k] : k;
      if (levels.length && !levels.includes(LEVELS[this.data.levels[i]])) continue;
      if (entry !== null && this.data.row_entry[i] !== entry) continue;
      if (span) {
        const pos = this.entryPosition[this.data.row_entry[i]];
        if (pos < span[0] || pos >= span[1]) continue;
      }
      let ok = true;
      for (const r of ranges) {
        const v = rows[i][r.column];
        if (typeof v !== 'number' || (r.min !== null && !(v >= r.min)) || (r.max !== null && !(v <= r.max))) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (pattern) {
        const name = String(rows[i][this.nameColumn]).toLowerCase();
        if (glob ? !glob.test(name) : !name.includes(pattern)) continue;
      }
      view.push(i);
    }
    this.viewCache.set(key, view);
    if (this.viewCache.size > 16) this.viewCache.delete(this.viewCache.keys().next().value);
    return view;
  }

  findByName(name) {
    if (!this.byName) {
      this.byName = new Map();
      this.data.rows.forEach((r, i) => {
        const key = String(r[this.nameColumn]);
        if (!this.byName.has(key)) this.byName.set(key, i);
      });
    }
    return this.byName.get(name);
  }
}
