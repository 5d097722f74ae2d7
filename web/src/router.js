// Hash routes with query parameters, so every view has a URL that can be shared:
//   #/overview?run=0   #/tree?run=0&node=Module.fc1.Linear.forward.0   #/table?run=0&result=error
//   #/tensor?run=0&row=12&slice=0   #/trends?run=0&name=...&column=Cosine   #/scan?tab=headroom
//   #/precheck?verdict=error&api=Torch.matmul.0

export const VIEWS = ['overview', 'tree', 'table', 'tensor', 'trends', 'scan', 'precheck'];

export function currentRoute() {
  const hash = location.hash.replace(/^#\/?/, '');
  const q = hash.indexOf('?');
  const view = (q < 0 ? hash : hash.slice(0, q)) || 'overview';
  const params = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
  return { view: VIEWS.includes(view) ? view : 'overview', params };
}

export function href(view, params = {}) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) value.forEach((v) => search.append(key, v));
    else search.set(key, String(value));
  }
  const text = search.toString();
  return `#/${view}${text ? '?' + text : ''}`;
}

export function go(view, params = {}) {
  const next = href(view, params);
  if (location.hash !== next) location.hash = next;
}

// Replaces the current URL's parameters without a new history entry or a re-render.
export function replaceParams(view, params) {
  history.replaceState(null, '', href(view, params));
  document.body.dataset.route = location.hash;
}

export function paramsObject(params) {
  const out = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length > 1 ? all : all[0];
  }
  return out;
}
