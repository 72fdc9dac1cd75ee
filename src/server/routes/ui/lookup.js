import { call, environments } from './api.js';
import { h, show, json, field, errorBox } from './dom.js';

// A key, a resolution and a node (or a level and scope): the answer and
// the explain, level by level.
export async function lookupPage(params) {
  const envs = await environments();
  const env = h('select', { name: 'env' }, envs.map((e) => h('option', { value: e.id }, `Environment ${e.id}`)));
  env.value = params.get('env') || (envs[0] && envs[0].id) || '';
  const key = h('input', { name: 'key', required: true, value: params.get('key') || '', size: 30 });
  const resolution = h('select', { name: 'resolution' }, ['priority', 'array', 'hash', 'deeper'].map((r) => h('option', {}, r)));
  resolution.value = params.get('resolution') || 'priority';
  const node = h('input', { name: 'node', value: params.get('node') || '', placeholder: 'node-1 (its stored scope)' });
  const level = h('input', { name: 'level', value: params.get('level') || '', placeholder: 'nodes=node-1' });
  const scope = h('textarea', { name: 'scope', rows: 4, placeholder: '{"::fqdn": "node-1"}' });
  scope.value = params.get('scope') || '';
  const out = h('div', { id: 'answer', 'aria-live': 'polite' });
  const form = h('form', {
    'aria-label': 'Lookup',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const body = { environment: Number(env.value), key: key.value.trim(), explain: true };
      body.resolution = resolution.value === 'deeper' ? { behavior: 'deeper' } : resolution.value;
      if (node.value.trim()) body.node = node.value.trim();
      if (level.value.trim()) body.level = level.value.trim();
      try {
        if (scope.value.trim()) body.scope = JSON.parse(scope.value);
        const r = await call('POST', '/api/v1/lookup', { body });
        out.replaceChildren(answer(r.data));
      } catch (e) {
        out.replaceChildren(errorBox(e));
      }
    },
  }, h('div', { class: 'inline' }, field('Environment', env), field('Key', key), field('Resolution', resolution),
    field('Node', node), field('Level', level)),
  field('Scope (JSON, over the node\'s)', scope), h('p', {}, h('button', { type: 'submit' }, 'Look up')));
  show(h('h1', {}, 'Lookup'), form, out);
  if (key.value) form.requestSubmit();
}

function answer(a) {
  const found = a.found ? 'Found' : a.default ? 'Not found: the default' : 'Not found';
  const steps = a.explain || [];
  return h('section', { class: 'card' }, h('h2', {}, found),
    'value' in a ? h('pre', { id: 'value' }, json(a.value)) : null,
    steps.length ? [h('h2', {}, 'Explain'), h('table', { id: 'explain' },
      h('thead', {}, h('tr', {}, ['Depth', 'Key', 'Source', 'Outcome', 'Value', 'Keys from'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, steps.map((s) => h('tr', {},
        h('td', {}, s.depth), h('td', {}, s.key), h('td', {}, s.source ?? ''), h('td', {}, s.outcome),
        h('td', { class: 'value' }, 'value' in s ? JSON.stringify(s.value) : ''),
        h('td', {}, s.keys ? Object.entries(s.keys).map(([k, src]) => `${k} ← ${src}`).join('; ') : '')))))] : null);
}
