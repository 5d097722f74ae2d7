// Small DOM and formatting helpers shared by the views.

export const LEVELS = ['pass', 'unmatched', 'warning', 'error', 'none'];
export const LEVEL_COLORS = {
  pass: '#2e9d5b',
  warning: '#e0a100',
  error: '#d64545',
  unmatched: '#8a7fb8',
  none: '#9aa0a6',
};

// The one way the UI builds HTML text from data (ECharts' tooltip formatters return HTML): a
// tagged template whose every substitution is escaped, so a name such as
// "Functional.relu<img src=x onerror=...>.0.forward" shows as text. Everything else is built
// with el(), whose text goes into text nodes.
export function escapeHtml(value) {
  return String(value).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function html(strings, ...values) {
  let out = strings[0];
  values.forEach((v, k) => {
    out += escapeHtml(v) + strings[k + 1];
  });
  return out;
}

// el('div', {class: 'x', onclick: fn, dataset: {a: 1}}, child, 'text', ...)
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'style' && typeof value === 'object') Object.assign(node.style, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function levelBadge(level) {
  return el('span', { class: `badge level-${level}` }, level);
}

export function levelDot(level) {
  return el('span', { class: `dot level-${level}`, title: level });
}

// A cell as the table shows it: numbers with up to 6 significant digits, texts as they are.
export function formatCell(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return formatNumber(value);
  return String(value);
}

export function formatNumber(v) {
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e-4 && a < 1e7) return String(Number(v.toPrecision(6)));
  return v.toExponential(4);
}

export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

// The short label of an op or module name: "Module.conv1.Conv2d.forward.0" -> "conv1 (Conv2d)".
export function shortName(name) {
  if (!name) return '(model)';
  const parts = name.split('.');
  if (parts[0] === 'Module' && parts.length >= 3) {
    const dir = parts.findIndex((p) => p === 'forward' || p === 'backward');
    if (dir > 2) {
      const path = parts.slice(1, dir - 1).join('.');
      return `${path} (${parts[dir - 1]}) ${parts.slice(dir).join('.')}`;
    }
  }
  return name;
}

// Python's str(list of str) -> array (the inverse of repr for the characters repr escapes).
export function parsePyStrList(text) {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  if (!s.startsWith('[') || !s.endsWith(']')) return null;
  const out = [];
  let i = 1;
  const skip = () => {
    while (i < s.length && s[i] === ' ') i++;
  };
  skip();
  if (s[i] === ']') return out;
  while (i < s.length) {
    const quote = s[i];
    if (quote !== "'" && quote !== '"') return null;
    i++;
    let item = '';
    let closed = false;
    while (i < s.length) {
      const c = s[i++];
      if (c === quote) {
        closed = true;
        break;
      }
      if (c !== '\\' || i >= s.length) {
        item += c;
        continue;
      }
      const e = s[i++];
      const simple = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' };
      if (e in simple) item += simple[e];
      else if (e === 'x' || e === 'u' || e === 'U') {
        const digits = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = s.slice(i, i + digits);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== digits) return null;
        item += String.fromCodePoint(parseInt(hex, 16));
        i += digits;
      } else item += '\\' + e;
    }
    if (!closed) return null;
    out.push(item);
    skip();
    if (s[i] === ',') {
      i++;
      skip();
      continue;
    }
    if (s[i] === ']') return i === s.length - 1 ? out : null;
    return null;
  }
  return null;
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

export function copyText(text) {
  if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
}
