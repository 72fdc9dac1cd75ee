// The console: one page, routed by the URL's fragment (#/page?params),
// so every view has an address to bookmark and share, and the server
// serves one file for all of them.
import { call, setToken, token, ApiError, me } from './api.js';
import { h, show, errorBox, field } from './dom.js';
import { environmentsPage } from './envs.js';
import { documentPage } from './document.js';
import { editPage } from './edit.js';
import { lookupPage } from './lookup.js';
import { nodePage } from './node.js';
import { changesPage, stopFeed } from './changes.js';

const pages = {
  '': environmentsPage,
  env: environmentsPage,
  doc: documentPage,
  edit: editPage,
  lookup: lookupPage,
  node: nodePage,
  changes: changesPage,
};

async function whoami() {
  try {
    Object.assign(me, (await call('GET', '/api/v1/whoami')).data);
    if (!me.name) { signIn(); return false; }
    const who = document.getElementById('who');
    who.replaceChildren(`${me.name} (${me.role}) `);
    if (token()) who.append(h('button', { class: 'secondary', type: 'button', onclick: signOut }, 'Forget token'));
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) { signIn(e); return false; }
    show(errorBox(e));
    return false;
  }
}

// The browser's own password dialog (Basic), which it shows for the
// challenge of `whoami?login`, then sends for the rest of the API.
async function password() {
  try { await call('GET', '/api/v1/whoami?login'); } catch { /* the form stays */ }
  if (await whoami()) route();
}

function signOut() { setToken(null); location.hash = '#/'; location.reload(); }

function signIn(e) {
  const input = h('input', { type: 'password', autocomplete: 'off', required: true, size: 50 });
  const form = h('form', {
    onsubmit: async (ev) => {
      ev.preventDefault();
      setToken(input.value.trim());
      if (await whoami()) route();
    },
  }, h('h1', {}, 'Sign in'),
  h('p', {}, 'The server asks who you are. Paste a bearer token (kept for this tab only), ',
    'or open the console with your Basic password or client certificate.'),
  e ? errorBox(e) : null,
  field('Token', input), h('p', {}, h('button', { type: 'submit' }, 'Sign in'), ' ',
    h('button', { type: 'button', class: 'secondary', onclick: password }, 'Sign in with a password')));
  show(form);
  input.focus();
}

async function route() {
  stopFeed();
  delete document.body.dataset.ready;
  const hash = location.hash.replace(/^#\/?/, '');
  const [name, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const page = pages[name];
  if (!page) { show(h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '#/' }, 'Environments'))); return; }
  try {
    await page(params);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) { signIn(e); return; }
    show(h('h1', {}, 'Something went wrong'), errorBox(e));
  }
  document.getElementById('main').focus();
  // What the browser tests wait for: this page has rendered.
  document.body.dataset.ready = name || 'env';
}

window.addEventListener('hashchange', route);
whoami().then((ok) => { if (ok) route(); });
