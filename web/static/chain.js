// Chain: the active bundle's identity and stages, per-stage counts, deny rates and latency
// percentiles (a bar chart), the bundle history with activate and rollback, and the shadow
// bundle with its recent disagreements and promote.
import { h, $, fmtUS, fmtTime, actionBadge } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function chart(svg, stages) {
  const rowH = 46;
  const left = 140;
  const width = 760;
  const max = Math.max(1, ...stages.map((st) => st.p99_us || 0));
  svg.setAttribute('viewBox', `0 0 ${width} ${Math.max(1, stages.length) * rowH + 10}`);
  svg.replaceChildren();
  stages.forEach((st, i) => {
    const y = 8 + i * rowH;
    svg.append(s('text', { x: 6, y: y + 24 }, st.name));
    ['p50', 'p90', 'p99'].forEach((p, j) => {
      const v = st[`${p}_us`] || 0;
      const w = Math.max(1, Math.round((v / max) * (width - left - 90)));
      svg.append(s('rect', { class: p, x: left, y: y + j * 13, width: w, height: 11 }));
      svg.append(s('text', { x: left + w + 6, y: y + j * 13 + 10 }, `${p} ${fmtUS(v)}`));
    });
  });
  if (!stages.length) svg.append(s('text', { x: 10, y: 20 }, 'no stages'));
}

export function createChain(api) {
  async function loadBundles() {
    const tbody = $('#bundles tbody');
    const msg = $('#bundles-msg');
    let r;
    try {
      r = await api.get('/bundles');
    } catch (e) {
      tbody.replaceChildren();
      msg.textContent = e.status === 404 ? 'This gateway does not keep a bundle history.' : `Bundle history: ${e.message}`;
      $('#rollback').disabled = true;
      return;
    }
    const list = Array.isArray(r) ? r : (r.history || r.bundles || []);
    const active = r.active || r.current || list[0];
    msg.textContent = list.length ? '' : 'No kept bundles.';
    $('#rollback').disabled = list.length < 2;
    tbody.replaceChildren(...list.map((b) => {
      const isActive = active && b.digest === active.digest;
      return h('tr', { dataset: { digest: b.digest } },
        h('td', {}, b.name), h('td', {}, b.version), h('td', { class: 'mono', title: b.digest }, (b.digest || '').slice(0, 16)),
        h('td', {}, b.source || ''), h('td', {}, b.activated_at ? new Date(b.activated_at).toLocaleString() : ''),
        h('td', {}, isActive ? h('strong', {}, 'active') : h('button', {
          type: 'button', class: 'quiet',
          onclick: async () => {
            try { await api.post('/bundles/activate', { version: b.digest }); } catch (e) { msg.textContent = `Activate: ${e.message}`; }
            load();
          },
        }, 'Activate')));
    }));
  }

  async function loadShadow() {
    const box = $('#shadow-bundle');
    const msg = $('#shadow-msg');
    let st;
    let dis;
    try {
      st = await api.get('/bundles/shadow');
      dis = await api.get('/shadow/disagreements?limit=50');
    } catch (e) {
      box.replaceChildren();
      msg.textContent = e.status === 404 ? 'This gateway has no shadow slot.' : `Shadow: ${e.message}`;
      return;
    }
    const sh = st.shadow;
    const c = st.stats || {};
    $('#shadow-promote').hidden = !sh;
    $('#shadow-clear').hidden = !sh;
    box.replaceChildren(sh
      ? h('dl', { class: 'kv' },
        h('dt', {}, 'Shadow'), h('dd', { class: 'name' }, `${sh.name} ${sh.version}`),
        h('dt', {}, 'Digest'), h('dd', { class: 'mono' }, sh.digest),
        h('dt', {}, 'Judged'), h('dd', {}, `${c.judged || 0} (disagreed ${c.disagreements || 0}, dropped ${c.dropped || 0})`))
      : h('p', { class: 'muted' }, 'No shadow bundle is loaded.'));
    const list = dis.disagreements || [];
    msg.textContent = list.length ? '' : 'No disagreements.';
    $('#shadow-disagreements tbody').replaceChildren(...list.map((d) => h('tr', {},
      h('td', {}, fmtTime(d.time)), h('td', {}, d.server || ''), h('td', {}, d.tool || ''),
      h('td', {}, actionBadge(d.active_action)), h('td', {}, actionBadge(d.shadow_action)),
      h('td', {}, d.rule || ''), h('td', {}, d.stage || ''), h('td', { class: 'mono' }, d.audit_id))));
  }

  $('#shadow-promote').addEventListener('click', async () => {
    try { await api.post('/bundles/shadow/promote'); } catch (e) { $('#shadow-msg').textContent = `Promote: ${e.message}`; }
    load();
  });
  $('#shadow-clear').addEventListener('click', async () => {
    try { await api.del('/bundles/shadow'); } catch (e) { $('#shadow-msg').textContent = `Clear: ${e.message}`; }
    load();
  });

  $('#rollback').addEventListener('click', async () => {
    try { await api.post('/bundles/rollback'); } catch (e) { $('#bundles-msg').textContent = `Rollback: ${e.message}`; }
    load();
  });

  async function load() {
    const v = await api.get('/chain');
    const box = $('#chain-bundle');
    if (!v.bundle) {
      box.replaceChildren(h('p', { class: 'error' }, 'No bundle is active.'));
    } else {
      box.replaceChildren(h('dl', { class: 'kv' },
        h('dt', {}, 'Bundle'), h('dd', { class: 'name' }, v.bundle.name),
        h('dt', {}, 'Version'), h('dd', { class: 'version' }, v.bundle.version),
        h('dt', {}, 'Digest'), h('dd', { class: 'mono digest' }, v.bundle.digest),
        h('dt', {}, 'Decisions'), h('dd', {}, `${v.decisions} since ${new Date(v.since).toLocaleTimeString()}`)));
    }
    const stages = v.stages || [];
    $('#chain-stages tbody').replaceChildren(...stages.map((st) => h('tr', { dataset: { stage: st.name } },
      h('td', {}, st.name),
      h('td', {}, [st.request && 'request', st.response && 'response'].filter(Boolean).join(' + ')),
      h('td', {}, [...(st.methods || ['tools/call']), ...(st.tools || []), ...(st.servers || [])].join(', ')),
      h('td', {}, st.fail_closed ? 'closed' : 'open'),
      h('td', { class: 'calls' }, st.calls),
      h('td', {}, st.by_action?.allow || 0), h('td', {}, st.by_action?.deny || 0), h('td', {}, st.by_action?.ask || 0),
      h('td', { class: 'deny-rate' }, `${(100 * (st.deny_rate || 0)).toFixed(1)}%`),
      h('td', {}, fmtUS(st.p50_us)), h('td', {}, fmtUS(st.p90_us)), h('td', {}, fmtUS(st.p99_us)))));
    chart($('#chain-chart'), stages);
    await loadBundles();
    await loadShadow();
  }

  return { load };
}
