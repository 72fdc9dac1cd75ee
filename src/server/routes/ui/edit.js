import { call, docPath, may, me } from './api.js';
import { h, show, json, link, errorBox, field, when } from './dom.js';
import { sideBySide } from './diff.js';

// Edits a document as JSON: a dry-run preview of the nodes it changes,
// a save that names the version it started from (If-Match), schema
// errors at their field, and a conflict shown with the user's text kept.
export async function editPage(params) {
  const env = params.get('env'), level = params.get('level') || '';
  const resource = params.get('resource'), kind = params.get('kind') || 'values';
  const path = docPath(env, level, resource, kind);
  if (!may('write')) {
    show(h('h1', {}, 'Edit'), h('p', {}, `Your role (${me.role}) may read documents, not change them. `,
      link('doc', { env, level, resource, kind }, 'Back to the document')));
    return;
  }
  const doc = await call('GET', path);
  const state = { base: doc.headers.get('X-Hierad-Version') || '0', path };
  const text = h('textarea', { spellcheck: 'false', 'aria-describedby': 'edit-help' });
  text.value = json(doc.data);
  const fields = h('ul', { class: 'fields', id: 'fields', 'aria-label': 'Fields' });
  const out = h('div', { id: 'outcome', 'aria-live': 'polite' });
  const where = `${resource} ${kind} at ${level || 'the root'} of environment ${env}`;
  const refresh = () => { try { outline(fields, JSON.parse(text.value)); } catch { /* shown on save */ } };
  text.addEventListener('input', refresh);
  refresh();
  const act = (fn) => async () => { out.replaceChildren(h('p', { class: 'muted' }, 'Working…')); await fn(text, fields, out, state); };
  show(h('h1', {}, `Edit ${where}`),
    h('p', { id: 'edit-help' }, 'Started from version ', h('span', { id: 'base' }, state.base),
      '. JSON; a save names this version, so another writer\'s save in between is shown as a conflict. ',
      link('doc', { env, level, resource, kind }, 'Back to the document')),
    h('div', { class: 'grid2' }, field('Document (JSON)', text), h('div', {}, h('h2', {}, 'Fields'), fields)),
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', id: 'preview', onclick: act(preview) }, 'Preview the change'),
      h('button', { type: 'button', id: 'save', onclick: act(save) }, 'Save')),
    out);
}

function parsed(text, out) {
  try {
    const v = JSON.parse(text.value);
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('a document is a JSON object');
    return v;
  } catch (e) {
    out.replaceChildren(errorBox(`Not a JSON object: ${e.message}`));
    return null;
  }
}

async function preview(text, fields, out, state) {
  const body = parsed(text, out);
  if (!body) return;
  try {
    const r = await call('PUT', `${state.path}?dry_run=true`, { body });
    const nodes = (r.data && r.data.nodes) || [];
    out.replaceChildren(h('section', { class: 'card', id: 'dry-run', 'aria-label': 'Preview' },
      h('h2', {}, nodes.length ? `${nodes.length} node(s) would change` : 'No node would change'),
      h('ul', {}, nodes.map((n) => h('li', { class: 'node', dataset: { node: n.node } }, h('strong', {}, n.node), ` (${n.level})`,
        h('ul', {}, (n.changes || []).map((c) => h('li', {}, `${c.resource} ${c.path}: `,
          h('code', {}, JSON.stringify(c.old)), ' → ', h('code', {}, JSON.stringify(c.new))))))))));
  } catch (e) {
    shown(e, fields, out);
  }
}

async function save(text, fields, out, state) {
  const body = parsed(text, out);
  if (!body) return;
  try {
    const r = await call('PUT', state.path, { body, extra: { 'If-Match': state.base } });
    state.base = r.headers.get('X-Hierad-Version') || state.base;
    document.getElementById('base').textContent = state.base;
    out.replaceChildren(h('p', { class: 'ok', role: 'status' }, `Saved as version ${state.base}.`));
  } catch (e) {
    if (e.status === 412) await conflict(text, out, state); else shown(e, fields, out);
  }
}

// Someone saved in between: their version beside the user's text, which
// stays in the editor; saving again takes theirs as the base.
async function conflict(text, out, state) {
  const latest = await call('GET', state.path);
  const version = latest.headers.get('X-Hierad-Version');
  const history = await call('GET', `${state.path}/history`);
  const last = history.data[history.data.length - 1] || {};
  out.replaceChildren(h('section', { class: 'conflict', id: 'conflict', role: 'alert' },
    h('h2', {}, 'Conflict: nothing was saved'),
    h('p', {}, `Version ${version} was saved by ${last.author || 'someone'} at ${when(last.created_at)}, after the version ${state.base} you started from. `,
      'Your text is kept in the editor. Compare, then save again to replace their version, or reload to start from theirs.'),
    sideBySide(json(latest.data), pretty(text.value), `Version ${version} (saved)`, 'Your text'),
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', onclick: () => { state.base = version; out.replaceChildren(h('p', { class: 'muted' }, `Your next save replaces version ${version}.`)); } }, `Keep my text over version ${version}`),
      h('button', { type: 'button', class: 'secondary', onclick: () => { text.value = json(latest.data); state.base = version; out.replaceChildren(); } }, 'Discard my text'))));
}

// The user's text laid out as the server's is, so the diff shows what
// differs rather than the layout.
function pretty(text) {
  try { return json(JSON.parse(text)); } catch { return text; }
}

// A 400 naming schema violations (`at /a/b: …`) puts each at its field;
// any other error is shown as it is.
function shown(e, fields, out) {
  const message = (e.body && e.body.message) || e.message;
  const problems = [...message.matchAll(/at (\/[^:]*): (.*?)(?=; at \/|; and \d+ more|; nothing was stored|$)/g)];
  for (const li of fields.querySelectorAll('.has-error')) { li.classList.remove('has-error'); li.querySelector('.field-error')?.remove(); }
  const unplaced = [];
  for (const [, pointer, problem] of problems) {
    const li = fields.querySelector(`li[data-pointer="${CSS.escape(pointer)}"]`) || closest(fields, pointer);
    if (!li) { unplaced.push(`${pointer}: ${problem}`); continue; }
    li.classList.add('has-error');
    li.append(h('span', { class: 'field-error', role: 'alert' }, problem));
  }
  out.replaceChildren(errorBox(e), unplaced.length ? h('ul', {}, unplaced.map((p) => h('li', {}, p))) : null);
}

// A missing field's error goes to its nearest parent that exists.
function closest(fields, pointer) {
  let p = pointer;
  while (p.includes('/')) {
    p = p.slice(0, p.lastIndexOf('/'));
    const li = fields.querySelector(`li[data-pointer="${CSS.escape(p || '/')}"]`);
    if (li) return li;
  }
  return null;
}

// Each key path of the document as a list item named by its JSON pointer.
function outline(list, doc) {
  list.replaceChildren(h('li', { dataset: { pointer: '/' } }, h('code', {}, '(document)')));
  const walk = (v, pointer, depth) => {
    if (!v || typeof v !== 'object' || depth > 6) return;
    for (const k of Object.keys(v)) {
      const p = `${pointer}/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`;
      list.append(h('li', { dataset: { pointer: p }, class: `depth-${depth}` }, '\u00a0'.repeat(depth * 2), h('code', {}, k)));
      walk(v[k], p, depth + 1);
    }
  };
  walk(doc, '', 0);
}
