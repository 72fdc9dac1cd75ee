import { get, maybe, docPath, nodePath, envPath, environment } from './api.js';
import { h, show, when, link, field, errorBox } from './dom.js';

// A node: every resource's effective data with each key's provenance,
// its stored scope, and what changed for it since a generation or tag.
export async function nodePage(params) {
  const envId = params.get('env'), node = params.get('node');
  const env = await environment(envId);
  const level = params.get('level') || `${env.levels[env.levels.length - 1].name}/${node}`;
  // All at once: the page waits for the slowest, not for their sum.
  const [scope, ...docs] = await Promise.all([maybe(`${nodePath(envId, node)}/scope`),
    ...env.resources.map(async (r) => [r, await get(`${docPath(envId, level, r, 'values')}?effective&show_lookup`)])]);
  show(h('h1', {}, `Node ${node}`),
    h('p', {}, `Environment ${envId}, level ${level} · `, link('lookup', { env: envId, node }, 'Look up a key for this node')),
    h('h2', {}, 'Stored scope'),
    scope ? [h('p', { class: 'muted' }, `Version ${scope.version} by ${scope.author || 'unknown'} at ${when(scope.created_at)}`),
      h('pre', { id: 'scope' }, JSON.stringify(scope.scope, null, 2))]
      : h('p', { class: 'muted', id: 'scope' }, 'No stored scope.'),
    changesSince(envId, node),
    h('h2', {}, 'Effective data'),
    docs.map(([r, d]) => resourceCard(envId, r, d)));
}

function resourceCard(env, resource, answer) {
  // `show_lookup` answers {data, lookup}; a server without it, the data.
  const provenance = answer && typeof answer === 'object' && 'lookup' in answer && 'data' in answer;
  const data = (provenance ? answer.data : answer) || {}, from = provenance ? answer.lookup : {};
  const keys = Object.keys(data);
  return h('section', { class: 'card resource', dataset: { resource } },
    h('h3', {}, resource, h('span', { class: 'muted' }, ` · ${keys.length} key(s)`)),
    keys.length ? h('table', {},
      h('thead', {}, h('tr', {}, ['Key', 'Value', 'From'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, keys.map((k) => {
        const p = from[k];
        return h('tr', { dataset: { key: k } }, h('td', {}, h('code', {}, k)),
          h('td', { class: 'value' }, h('code', {}, short(data[k]))),
          h('td', {}, p ? h('details', { class: 'provenance' },
            h('summary', {}, `${p.level || 'the root'} (${p.kind})`),
            h('p', {}, `Version ${p.version} by ${p.author || 'unknown'} at ${when(p.created_at)} · `,
              link('doc', { env, level: p.level, resource, kind: p.kind }, 'open the document'))) : ''));
      }))) : h('p', { class: 'muted' }, 'No data.'));
}

function short(v) {
  const text = JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

// `nodes/changed` narrowed to this node.
function changesSince(env, node) {
  const since = h('input', { name: 'since', placeholder: 'a generation (e.g. 12) or a tag', size: 28 });
  const out = h('div', { id: 'changed', 'aria-live': 'polite' });
  const form = h('form', {
    class: 'inline',
    'aria-label': 'Changes since',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const v = since.value.trim();
      const q = /^\d+$/.test(v) ? `since=${v}` : `tag=${encodeURIComponent(v)}`;
      try {
        const r = await get(`${envPath(env)}/nodes/changed?${q}`);
        const mine = r.nodes.find((n) => n.node === node);
        out.replaceChildren(mine
          ? h('ul', {}, Object.entries(mine.resources).map(([res, paths]) => h('li', {}, `${res}: ${paths.join(', ')}`)))
          : h('p', {}, `Nothing changed for ${node} between generation ${r.since} and ${r.generation}.`));
      } catch (e) { out.replaceChildren(errorBox(e)); }
    },
  }, field('Changed since', since), h('button', { type: 'submit' }, 'Show'));
  return [h('h2', {}, 'Changes'), form, out];
}
