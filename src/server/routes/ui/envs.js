import { environments, may } from './api.js';
import { h, show, link, field } from './dom.js';

// Every environment the principal may use: its levels, components,
// resources and registered nodes, each a link to its page.
export async function environmentsPage(params) {
  const only = params.get('env');
  const envs = (await environments()).filter((e) => !only || String(e.id) === only);
  show(h('h1', {}, only ? `Environment ${only}` : 'Environments'),
    envs.length ? envs.map(card) : h('p', {}, 'No environment you may use.'));
}

function card(env) {
  const nodes = env.levels.flatMap((l, i) => (env.registers[i] ? env.registers[i].values.map((v) => [l.name, v]) : []));
  return h('section', { class: 'card', 'aria-labelledby': `env-${env.id}` },
    h('h2', { id: `env-${env.id}` }, `Environment ${env.id}`),
    h('p', {}, 'Levels: ', env.levels.length ? env.levels.map((l) => l.name).join(' › ') : 'none', ' · ',
      link('lookup', { env: env.id }, 'Look up a key')),
    h('p', {}, 'Components: ', env.components.map((c) => c.name || c.id).join(', ')),
    h('h3', {}, `Nodes (${nodes.length})`),
    nodes.length
      ? h('ul', { class: 'nodes' }, nodes.map(([level, node]) => h('li', {},
        link('node', { env: env.id, node, level: `${level}/${node}` }, node),
        ' ', h('span', { class: 'muted' }, level))))
      : h('p', { class: 'muted' }, 'No level keeps a register of nodes.'),
    h('h3', {}, `Resources (${env.resources.length})`),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Resource'),
      h('th', { scope: 'col' }, 'At the root'))),
    h('tbody', {}, env.resources.map((r) => h('tr', {}, h('td', {}, r), h('td', {},
      link('doc', { env: env.id, resource: r, kind: 'values' }, 'values'), ' · ',
      link('doc', { env: env.id, resource: r, kind: 'overrides' }, 'overrides')))))),
    openForm(env));
}

// Any document by its level path.
function openForm(env) {
  const level = h('input', { name: 'level', placeholder: 'nodes/node-1 (empty: the root)', size: 30 });
  const resource = h('select', { name: 'resource' }, env.resources.map((r) => h('option', { value: r }, r)));
  const kind = h('select', { name: 'kind' }, h('option', {}, 'values'), h('option', {}, 'overrides'));
  return h('form', {
    class: 'inline',
    'aria-label': `Open a document of environment ${env.id}`,
    onsubmit: (ev) => {
      ev.preventDefault();
      const q = new URLSearchParams({ env: env.id, level: level.value.trim(), resource: resource.value, kind: kind.value });
      location.hash = `#/doc?${q}`;
    },
  }, field('Level path', level), field('Resource', resource), field('Kind', kind),
  h('button', { type: 'submit' }, may('write') ? 'Open or create' : 'Open'));
}
