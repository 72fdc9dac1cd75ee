// The one way the console calls the API: same origin, JSON, and a token
// typed once kept for this tab only (sessionStorage) and sent as a bearer
// header, never in a URL or a cookie. Basic and client certificates are
// the browser's own.
const TOKEN = 'hierad.token';

// Who is signed in: {name, role, environments}; `may(role)` asks. Only
// what to show: the server checks every request itself.
export const me = { name: null, role: 'read', environments: null };
const ranks = { read: 0, write: 1, admin: 2 };
export const may = (role) => ranks[me.role] >= ranks[role];

export function token() { return sessionStorage.getItem(TOKEN); }
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN, value); else sessionStorage.removeItem(TOKEN);
}

export class ApiError extends Error {
  constructor(status, body, headers) {
    const text = body && typeof body === 'object' ? body.message || body.error : body;
    super(`${status}: ${text || 'no message'}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export function headers(extra = {}) {
  const h = { Accept: 'application/json', ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

export async function call(method, path, { body, extra = {}, signal } = {}) {
  const h = headers(extra);
  let payload;
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const r = await fetch(path, { method, headers: h, body: payload, cache: 'no-store', signal });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!r.ok) throw new ApiError(r.status, data, r.headers);
  return { status: r.status, data, headers: r.headers };
}

export const get = async (path) => (await call('GET', path)).data;

// 404 as null: a register, a scope or a document that is not there.
export async function maybe(path) {
  try { return await get(path); } catch (e) { if (e.status === 404) return null; throw e; }
}

const seg = (text) => text.split('/').map(encodeURIComponent).join('/');

export const envPath = (env) => `/api/v1/config/environments/${encodeURIComponent(env)}`;

// A document: `level` is a level path (`nodes/node-1`, '' for the root).
export function docPath(env, level, resource, kind = 'values') {
  return `${envPath(env)}/${level ? `${seg(level)}/` : ''}resources/${seg(resource)}/${kind}`;
}

export const nodePath = (env, node) => `${envPath(env)}/nodes/${encodeURIComponent(node)}`;

// Every environment with its levels, resources and registered nodes.
export async function environments() {
  const [envs, components] = await Promise.all([
    get('/api/v1/config/environments'), get('/api/v1/config/components')]);
  return Promise.all(envs.map((env) => described(env, components)));
}

// One environment, described the same way.
export async function environment(id) {
  const [env, components] = await Promise.all([
    get(envPath(id)), get('/api/v1/config/components')]);
  return described(env, components);
}

async function described(env, components) {
  const byId = new Map(components.map((c) => [c.id, c]));
  const levels = await get(`${envPath(env.id)}/hierarchy_levels`);
  const registers = await Promise.all(levels.map((l) =>
    maybe(`${envPath(env.id)}/hierarchy_levels/${encodeURIComponent(l.name)}/register`)));
  const comps = env.components.map((c) => byId.get(c) || byId.get(c.id) || c);
  const resources = comps.flatMap((c) => (c.resource_definitions || []).map((d) => d.name));
  return { id: env.id, levels, registers, components: comps, resources: [...new Set(resources)].sort() };
}
