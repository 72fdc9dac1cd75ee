// Building the page: elements from data, text always as text (never
// parsed as HTML), so no stored value can inject markup or script.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function show(...children) {
  const main = document.getElementById('main');
  main.replaceChildren(...children.flat());
  return main;
}

// Seconds since the epoch, in the browser's time zone.
export function when(seconds) {
  if (seconds === null || seconds === undefined) return '';
  return new Date(seconds * 1000).toLocaleString();
}

export function errorBox(e) {
  return h('div', { class: 'error', role: 'alert' }, e && e.message ? e.message : String(e));
}

export function link(hash, params, text) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null));
  return h('a', { href: `#/${hash}?${q}` }, text);
}

export const json = (v) => JSON.stringify(v, null, 2);

// YAML for reading (block style, strings quoted when YAML would read
// them as something else).
export function yaml(v, indent = '') {
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return v.map((x) => `\n${indent}- ${block(x, `${indent}  `)}`).join('');
  }
  if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return '{}';
    return keys.map((k) => `\n${indent}${scalar(k)}:${inline(v[k], `${indent}  `)}`).join('');
  }
  return scalar(v);
}
function block(x, indent) {
  const text = yaml(x, indent);
  return text.startsWith('\n') ? text.trimStart() : text;
}
function inline(x, indent) {
  const text = yaml(x, indent);
  return text.startsWith('\n') ? text : ` ${text}`;
}
function scalar(v) {
  if (v === null) return 'null';
  if (typeof v !== 'string') return String(v);
  const plain = /^[A-Za-z_][\w .\/-]*$/.test(v) && !/^(true|false|yes|no|on|off|null|~)$/i.test(v)
    && !v.endsWith(' ');
  return plain ? v : JSON.stringify(v);
}
export const toYaml = (v) => yaml(v).replace(/^\n/, '');

export function field(labelText, control) {
  const id = control.id || `f-${Math.random().toString(36).slice(2)}`;
  control.id = id;
  return h('div', {}, h('label', { for: id }, labelText), control);
}
