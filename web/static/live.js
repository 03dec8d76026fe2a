// Live decisions: recent audit events from GET /decisions, then each new one from the event
// stream; a held call (its held record) shows as held until its decision arrives; filters; a
// click shows the full event.
import { h, $, actionBadge, fmtTime, fmtUS, pretty } from './dom.js';

const MAX = 500;

export function createLive(api) {
  let events = [];
  let selected = null;
  const tbody = $('#events tbody');
  const filters = { action: $('#f-action'), server: $('#f-server'), tool: $('#f-tool'), text: $('#f-text') };

  function matches(ev) {
    const a = filters.action.value;
    if (a === 'approval' && ev.kind !== 'approval') return false;
    if (a === 'held' && ev.requested_action !== 'ask' && ev.kind !== 'held') return false;
    if ((a === 'allow' || a === 'deny') && ev.action !== a) return false;
    const has = (v, q) => !q || String(v || '').toLowerCase().includes(q.toLowerCase());
    if (!has(ev.server, filters.server.value) || !has(ev.tool, filters.tool.value)) return false;
    const q = filters.text.value;
    if (q && !has([ev.id, ev.reason, ev.rule, ev.stage, ev.method, ev.agent, ev.gateway, ev.approval?.decided_by].join(' '), q)) return false;
    return true;
  }

  // decided drops the held records of calls whose decision is in the list: a call shows as
  // held only until its decision arrives.
  function decided(list) {
    const done = new Set(list.filter((e) => e.kind === 'decision' || !e.kind).map((e) => e.id));
    return list.filter((e) => !(e.kind === 'held' && done.has(e.approval?.id)));
  }

  function row(ev) {
    if (ev.kind === 'held') {
      return h('tr', { class: `event held-call${selected === ev.id ? ' selected' : ''}`, dataset: { id: ev.id, call: ev.approval?.id || '', action: 'held' }, onclick: () => show(ev) },
        h('td', { class: 'mono' }, fmtTime(ev.time)),
        h('td', {}, ev.server || ''),
        h('td', { class: 'tool' }, ev.tool || ev.method || ''),
        h('td', { class: 'act' }, actionBadge('held'), h('span', { class: 'muted' }, ' waiting for a person')),
        h('td', { class: 'reason' }, ev.reason || ''),
        h('td', {}, (ev.stages || []).map((s) => h('span', { class: 'stage-chip' }, `${s.stage}: ${s.action || 'none'}`))));
    }
    const stages = (ev.stages || []).map((s) => h('span', { class: 'stage-chip', title: s.reason || '' },
      `${s.stage}: ${s.action || 'none'} · ${fmtUS(s.latency_us || 0)}`));
    let what = ev.kind === 'decision' || !ev.kind ? null : h('span', { class: 'muted' }, ` ${ev.kind}`);
    const appr = ev.approval ? h('span', { class: 'muted' }, ` ${ev.approval.decision} by ${ev.approval.decided_by || '?'}`) : null;
    return h('tr', { class: `event${selected === ev.id ? ' selected' : ''}`, dataset: { id: ev.id, action: ev.action || '' }, onclick: () => show(ev) },
      h('td', { class: 'mono' }, fmtTime(ev.time)),
      h('td', {}, ev.server || ''),
      h('td', { class: 'tool' }, ev.tool || ev.method || ''),
      h('td', { class: 'act' }, ev.action ? actionBadge(ev.action) : h('span', { class: 'action sample', text: 'event' }), what, appr),
      h('td', { class: 'reason' }, ev.reason || ''),
      h('td', {}, stages));
  }

  function render() {
    const shown = events.filter(matches);
    tbody.replaceChildren(...shown.map(row));
    $('#events-empty').hidden = shown.length > 0;
  }

  async function show(ev) {
    selected = ev.id;
    $('#event-detail').hidden = false;
    $('#event-json').textContent = pretty(ev);
    render();
    try { $('#event-json').textContent = pretty(await api.get(`/decisions/${encodeURIComponent(ev.id)}`)); } catch { /* keep the copy we have */ }
  }

  $('#detail-close').addEventListener('click', () => { selected = null; $('#event-detail').hidden = true; render(); });
  for (const el of Object.values(filters)) el.addEventListener('input', render);
  $('#f-clear').addEventListener('click', () => { for (const el of Object.values(filters)) el.value = ''; render(); });

  return {
    async load() {
      const r = await api.get('/decisions?limit=200');
      const seen = new Set(events.map((e) => e.id));
      events = decided([...events, ...(r.events || []).filter((e) => !seen.has(e.id))]).slice(0, MAX);
      render();
    },
    add(ev) {
      if (events.some((e) => e.id === ev.id)) return;
      events.unshift(ev);
      if (ev.kind === 'decision' || !ev.kind) events = decided(events);
      if (events.length > MAX) events.length = MAX;
      render();
    },
  };
}
