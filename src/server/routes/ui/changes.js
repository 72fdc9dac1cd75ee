import { headers, get } from './api.js';
import { h, show, when, link, errorBox } from './dom.js';

// The change feed, live: Server-Sent Events read with fetch, since
// EventSource cannot send the bearer header.
let running = null;
export function stopFeed() { if (running) { running.abort(); running = null; } }

export async function changesPage(params) {
  const list = h('ul', { class: 'feed', id: 'feed', 'aria-live': 'polite', 'aria-label': 'Changes, newest first' });
  const status = h('p', { class: 'muted', id: 'feed-status' }, 'Connecting…');
  show(h('h1', {}, 'Changes'), status, list);
  const env = params.get('env');
  const first = await get(`/api/v1/changes?since=${Math.max(0, Number(params.get('since') || 0))}${env ? `&env=${env}` : ''}`);
  first.changes.slice(-50).forEach((c) => list.prepend(item(c)));
  listen(first.generation, env, list, status);
}

async function listen(since, env, list, status) {
  const abort = new AbortController();
  running = abort;
  try {
    const r = await fetch(`/api/v1/changes?since=${since}${env ? `&env=${env}` : ''}`, {
      headers: headers({ Accept: 'text/event-stream' }), signal: abort.signal, cache: 'no-store',
    });
    if (!r.ok) throw new Error(`${r.status}: the feed refused`);
    status.textContent = 'Live: new changes appear at the top.';
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
        if (data) list.prepend(item(JSON.parse(data)));
      }
    }
    status.textContent = 'The feed ended; reload to follow it again.';
  } catch (e) {
    if (!abort.signal.aborted) status.replaceChildren(errorBox(e));
  }
}

function item(c) {
  const level = c.level || '';
  return h('li', { dataset: { generation: c.generation } },
    h('strong', {}, `#${c.generation}`), ` ${when(c.created_at)} · ${c.author || 'unknown'} · ${c.kind} `,
    c.resource ? link('doc', { env: c.environment, level, resource: c.resource, kind: c.kind === 'overrides' ? 'overrides' : 'values' },
      `${c.resource} at ${level || 'the root'}`) : level,
    c.version ? ` (version ${c.version})` : '', ` · environment ${c.environment}`);
}
