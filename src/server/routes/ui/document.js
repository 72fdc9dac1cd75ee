import { call, get, docPath, may } from './api.js';
import { h, show, when, json, toYaml, link, errorBox } from './dom.js';
import { sideBySide } from './diff.js';

// A document (values or overrides at a level): its content as YAML or
// JSON, its history, a diff of any two versions, and restore.
export async function documentPage(params) {
  const env = params.get('env'), level = params.get('level') || '';
  const resource = params.get('resource'), kind = params.get('kind') || 'values';
  const path = docPath(env, level, resource, kind);
  const [doc, history] = await Promise.all([call('GET', path), get(`${path}/history`)]);
  const version = doc.headers.get('X-Hierad-Version');
  const view = h('pre', { id: 'content', tabindex: '0', 'aria-label': 'Content' });
  const format = params.get('format') || 'yaml';
  const render = (f) => { view.textContent = f === 'json' ? json(doc.data) : toYaml(doc.data); };
  render(format);
  const where = `${resource} ${kind} at ${level || 'the root'} of environment ${env}`;
  const diffArea = h('div', { id: 'diff', 'aria-live': 'polite' });
  show(h('h1', {}, where),
    h('p', {}, `Version ${version || 'none'} · `,
      link('doc', { env, level, resource, kind: kind === 'values' ? 'overrides' : 'values' },
        kind === 'values' ? 'overrides' : 'values'),
      may('write') ? [' · ', link('edit', { env, level, resource, kind }, 'Edit')] : null),
    h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Format' },
      h('button', { type: 'button', class: 'secondary', onclick: () => render('yaml') }, 'YAML'),
      h('button', { type: 'button', class: 'secondary', onclick: () => render('json') }, 'JSON')),
    view,
    h('h2', {}, 'History'),
    historyTable(path, history, diffArea, params),
    diffArea);
  const from = params.get('from'), to = params.get('to');
  if (from && to) await compare(path, from, to, diffArea);
}

function historyTable(path, history, diffArea, params) {
  const rows = [...history].reverse();
  const pick = (name, v) => h('input', {
    type: 'radio', name, value: v.version, 'aria-label': `${name === 'from' ? 'Compare from' : 'Compare to'} version ${v.version}`,
  });
  const table = h('table', { id: 'history' },
    h('thead', {}, h('tr', {}, ['From', 'To', 'Version', 'Time', 'Author', 'Size', ''].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, rows.map((v) => h('tr', { dataset: { version: v.version } },
      h('td', {}, pick('from', v)), h('td', {}, pick('to', v)),
      h('td', {}, v.version, v.deleted ? ' (deleted)' : ''),
      h('td', {}, h('time', { datetime: new Date(v.created_at * 1000).toISOString() }, when(v.created_at))),
      h('td', { class: 'author' }, v.author || 'unknown'),
      h('td', {}, v.size ?? ''),
      h('td', {}, may('write') && !v.deleted && v !== rows[0] ? h('button', {
        type: 'button', class: 'secondary', 'aria-label': `Restore version ${v.version}`,
        onclick: () => restore(path, v.version, params),
      }, 'Restore') : null)))));
  const button = h('button', {
    type: 'button', id: 'compare',
    onclick: async () => {
      const from = table.querySelector('input[name=from]:checked');
      const to = table.querySelector('input[name=to]:checked');
      if (!from || !to) { diffArea.replaceChildren(errorBox('Pick a version to compare from and one to compare to.')); return; }
      await compare(path, from.value, to.value, diffArea);
    },
  }, 'Compare');
  return h('div', {}, table, h('div', { class: 'toolbar' }, button));
}

async function compare(path, from, to, area) {
  try {
    const [a, b] = await Promise.all([get(`${path}?version=${from}`), get(`${path}?version=${to}`)]);
    area.replaceChildren(h('h2', {}, `Version ${from} → version ${to}`),
      sideBySide(toYaml(a), toYaml(b), `Version ${from}`, `Version ${to}`));
  } catch (e) {
    area.replaceChildren(errorBox(e));
  }
}

async function restore(path, version, params) {
  try {
    await call('POST', `${path}/restore?version=${version}`);
    params.delete('from'); params.delete('to');
    location.hash = `#/doc?${params}&restored=${version}`;
  } catch (e) {
    document.getElementById('diff').replaceChildren(errorBox(e));
  }
}
