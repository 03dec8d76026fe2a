// History: stored decisions (GET /history: the PostgreSQL sink, or the audit stream), filtered
// by time, action, rule, tool, server, principal and text; a drill-down of one call (GET
// /history/{id}); counts over time as a stacked bar chart in inline SVG (GET /history/chart);
// and exports of the current filter (GET /history/export).
import { h, $, actionBadge, fmtUS, pretty } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const COLOURS = { allow: '#1b7f3b', deny: '#b42318', held: '#a15c00', ask: '#a15c00' };
const PALETTE = ['#2454b8', '#7a3db8', '#0f7c8c', '#b8732f', '#5d6677', '#c2417a', '#3c8d2f', '#8c6b0f'];

function s(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function fmtWhen(t) {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString([], { hour12: false });
}

function principal(ev) {
  return ev.principal ? (ev.principal.subject || ev.principal.client_id || '') : '';
}

// callID is the call an event belongs to: a held record names it in approval.id.
export function callID(ev) {
  return ev.kind === 'held' && ev.approval?.id ? ev.approval.id : ev.id;
}

// chart draws c (GET /history/chart) as stacked bars, one per bucket, coloured per value.
function chart(svg, legend, c) {
  const buckets = c.buckets || [];
  const keys = [...new Set(buckets.flatMap((b) => Object.keys(b.counts)))].sort();
  const colour = (k, i) => COLOURS[k] || PALETTE[i % PALETTE.length];
  const width = 760; const height = 180; const left = 40; const bottom = 24;
  const max = Math.max(1, ...buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + n, 0)));
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.replaceChildren();
  svg.append(s('text', { x: 4, y: 12 }, String(max)), s('text', { x: 4, y: height - bottom }, '0'));
  if (!buckets.length) svg.append(s('text', { x: left + 10, y: 40 }, 'nothing in this range'));
  const bw = Math.min(40, Math.max(2, Math.floor((width - left - 10) / Math.max(1, buckets.length)) - 2));
  buckets.forEach((b, i) => {
    const x = left + i * (bw + 2);
    let y = height - bottom;
    keys.forEach((k, j) => {
      const n = b.counts[k] || 0;
      if (!n) return;
      const hgt = Math.max(1, Math.round((n / max) * (height - bottom - 16)));
      y -= hgt;
      const r = s('rect', { class: 'bar', x, y, width: bw, height: hgt, fill: colour(k, j) });
      r.dataset.key = k;
      r.dataset.count = String(n);
      r.append(s('title', {}, `${fmtWhen(b.start)} · ${k || '(none)'}: ${n}`));
      svg.append(r);
    });
    if (i === 0 || i === buckets.length - 1) {
      svg.append(s('text', { x, y: height - 6 }, fmtWhen(b.start)));
    }
  });
  legend.replaceChildren(...keys.map((k, j) => {
    const sw = h('span', { class: 'sw' });
    sw.style.background = colour(k, j); // CSSOM, not a style attribute: the CSP allows it
    return h('span', { class: 'key', dataset: { key: k } }, sw, k || '(none)');
  }));
}

export function createHistory(api) {
  const f = {
    from: $('#h-from'), to: $('#h-to'), action: $('#h-action'), rule: $('#h-rule'), tool: $('#h-tool'),
    server: $('#h-server'), principal: $('#h-principal'), q: $('#h-q'), unverified: $('#h-unverified'),
  };
  const tbody = $('#h-table tbody');
  let cursor = '';
  let selected = null;

  // params is the current filter as query parameters.
  function params() {
    const p = new URLSearchParams();
    for (const k of ['from', 'to']) {
      if (f[k].value) {
        const d = new Date(f[k].value);
        if (!Number.isNaN(d.getTime())) p.set(k, d.toISOString());
      }
    }
    for (const k of ['action', 'rule', 'tool', 'server', 'principal', 'q']) {
      const v = f[k].value.trim();
      if (v) p.set(k, v);
    }
    if (f.unverified.checked) p.set('unverified', 'true');
    return p;
  }

  function row(ev) {
    const held = ev.held || ev.kind === 'held';
    const id = callID(ev);
    return h('tr', { class: `event${selected === id ? ' selected' : ''}${ev.verified ? '' : ' unverified'}`,
      dataset: { id, action: held ? 'held' : (ev.action || '') }, onclick: () => show(id) },
    h('td', { class: 'mono' }, fmtWhen(ev.time)),
    h('td', { class: 'act' }, actionBadge(held ? 'held' : ev.action),
      ev.verified ? null : h('span', { class: 'error', title: ev.verify_problem || '' }, ' unverified')),
    h('td', {}, ev.server || ''),
    h('td', { class: 'tool' }, ev.tool || ev.method || ''),
    h('td', {}, ev.rule || ''),
    h('td', {}, principal(ev)),
    h('td', { class: 'reason' }, ev.reason || ''));
  }

  async function search(more) {
    const p = params();
    if (more && cursor) p.set('cursor', cursor);
    p.set('limit', '100');
    const status = $('#h-status');
    status.textContent = 'Searching…';
    let r;
    try {
      r = await api.get(`/history?${p}`);
    } catch (e) {
      status.textContent = `History: ${e.message}`;
      return;
    }
    const rows = (r.events || []).map(row);
    if (more) tbody.append(...rows); else tbody.replaceChildren(...rows);
    cursor = r.next || '';
    $('#h-more').hidden = !cursor;
    const n = tbody.children.length;
    status.textContent = `${n} shown from ${r.source}${r.truncated ? ' (the stream scan stopped at its bound: "Older" reads on)' : ''}.`;
    $('#h-empty').hidden = n > 0;
  }

  async function loadChart() {
    const p = params();
    p.set('by', $('#h-by').value);
    p.set('bucket', $('#h-bucket').value);
    try {
      const c = await api.get(`/history/chart?${p}`);
      chart($('#h-chart'), $('#h-legend'), c);
      if (c.truncated) $('#h-legend').append(h('span', { class: 'muted' }, ' (counts of the newest events only: the range is larger than one scan)'));
    } catch (e) {
      $('#h-legend').textContent = `Chart: ${e.message}`;
    }
  }

  async function show(id) {
    selected = id;
    for (const tr of tbody.children) tr.classList.toggle('selected', tr.dataset.id === id);
    const d = await api.get(`/history/${encodeURIComponent(id)}`).catch((e) => ({ error: e.message }));
    const panel = $('#h-detail');
    panel.hidden = false;
    if (d.error) { $('#h-summary').replaceChildren(h('dd', { class: 'error' }, d.error)); return; }
    const ev = d.event;
    const held = ev.held;
    panel.dataset.id = id;
    panel.dataset.state = held ? 'held' : (ev.action || '');
    const kv = (k, v) => (v || v === 0 ? [h('dt', {}, k), h('dd', { dataset: { k } }, v)] : []);
    $('#h-summary').replaceChildren(
      ...kv('Outcome', held ? actionBadge('held') : actionBadge(ev.action)),
      ...kv('Requested', ev.requested_action),
      ...kv('Audit id', id),
      ...kv('Time', fmtWhen(ev.time)),
      ...kv('Server', ev.server), ...kv('Tool', ev.tool || ev.method),
      ...kv('Rule', ev.rule), ...kv('Stage', ev.stage), ...kv('Reason', ev.reason),
      ...kv('Principal', ev.principal ? `${principal(ev)} (${ev.principal.issuer || '?'})` : ''),
      ...kv('Approval', ev.approval && !held ? `${ev.approval.decision} by ${ev.approval.decided_by || '?'}` : ''),
      ...kv('Latency', ev.latency_us ? fmtUS(ev.latency_us) : ''),
      ...kv('Bundle', ev.bundle ? `${ev.bundle.name}@${ev.bundle.version || ''}` : ''),
      ...kv('Signature', ev.verified ? 'verified' : `NOT verified: ${ev.verify_problem || '?'}`));
    $('#h-stages tbody').replaceChildren(...(ev.stages || []).map((st) => h('tr', { dataset: { stage: st.stage } },
      h('td', {}, st.stage), h('td', {}, st.phase || ''), h('td', {}, actionBadge(st.action)),
      h('td', { class: 'score' }, st.score !== undefined ? String(st.score) : ''), h('td', {}, st.rule || ''),
      h('td', {}, fmtUS(st.latency_us || 0)), h('td', { class: 'reason' }, st.reason || st.error || ''))));
    const sh = ev.shadow;
    $('#h-shadow').replaceChildren(...(sh ? [h('p', { class: `shadow${sh.disagrees ? ' disagrees' : ''}` },
      'Shadow bundle: ', actionBadge(sh.action), ` ${sh.rule || ''}`, sh.disagrees ? h('strong', {}, ' (disagrees)') : '',
      sh.error ? ` error: ${sh.error}` : '')] : []));
    const story = (r) => (r.kind === 'held' ? 'held for a person'
      : `${r.kind}${r.approval ? ` ${r.approval.decision}${r.approval.decided_by ? ` by ${r.approval.decided_by}` : ''}` : ''}`);
    $('#h-related').replaceChildren(...(d.related || []).map((r) => h('li', { dataset: { kind: r.kind } },
      `${fmtWhen(r.time)} ${story(r)}`)));
    $('#h-json').textContent = pretty(ev);
    // Labels: a person's verdict on a decided, verified call (palisade tune learns from them).
    const labellable = !held && ev.kind === 'decision' && ev.verified;
    $('#h-label').hidden = !labellable;
    $('#h-label-status').textContent = '';
    $('#h-labels').replaceChildren();
    if (labellable) loadLabels(id);
  }

  function labelItem(l) {
    const lb = l.label || {};
    return h('li', { dataset: { verdict: lb.verdict || '' } },
      `${fmtWhen(l.time)} ${lb.verdict} by ${lb.by}${lb.note ? `: ${lb.note}` : ''}`);
  }

  async function loadLabels(id) {
    const r = await api.get(`/labels?ref=${encodeURIComponent(id)}`).catch(() => null);
    if (r && selected === id) $('#h-labels').replaceChildren(...(r.labels || []).map(labelItem));
  }

  $('#h-label').addEventListener('submit', async (e) => {
    e.preventDefault();
    const id = selected;
    if (!id) return;
    const status = $('#h-label-status');
    status.textContent = 'Saving…';
    try {
      const l = await api.post(`/history/${encodeURIComponent(id)}/label`,
        { verdict: $('#h-label-verdict').value, note: $('#h-label-note').value });
      status.textContent = `Labelled ${l.label.verdict}`;
      $('#h-label-note').value = '';
      if (selected === id) $('#h-labels').append(labelItem(l));
    } catch (err) {
      status.textContent = `Label: ${err.message}`;
    }
  });

  // download fetches an export with the caller's credential and saves it.
  async function download(format) {
    const p = params();
    p.set('format', format);
    const headers = api.token ? { Authorization: `Bearer ${api.token}` } : {};
    const resp = await fetch(`${api.base}/history/export?${p}`, { headers });
    if (!resp.ok) { $('#h-status').textContent = `Export: ${resp.status}`; return; }
    const url = URL.createObjectURL(await resp.blob());
    const a = h('a', { href: url, download: `palisade-history.${format === 'csv' ? 'csv' : 'ndjson'}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  $('#h-filters').addEventListener('submit', (e) => { e.preventDefault(); search(false); loadChart(); });
  $('#h-more').addEventListener('click', () => search(true));
  $('#h-by').addEventListener('change', loadChart);
  $('#h-bucket').addEventListener('change', loadChart);
  $('#h-export-csv').addEventListener('click', (e) => { e.preventDefault(); download('csv'); });
  $('#h-export-json').addEventListener('click', (e) => { e.preventDefault(); download('ndjson'); });
  $('#h-detail-close').addEventListener('click', () => { selected = null; $('#h-detail').hidden = true; });

  return {
    async load() { await Promise.all([search(false), loadChart()]); },
    // decided takes a decision from the live stream: a row listed as held for that call shows
    // the decision at once (its signature as the held record's; Search reads the stored one).
    decided(ev) {
      const tr = [...tbody.children].find((r) => r.dataset.id === ev.id && r.dataset.action === 'held');
      if (tr) tr.replaceWith(row({ ...ev, verified: !tr.classList.contains('unverified') }));
    },
  };
}
