// Held calls: the queue from GET /approvals, re-read on every approval event; approve or deny
// with a scope; a count badge and a visible (sound-free) alert while anything waits.
import { h, $, actionBadge, pretty } from './dom.js';

export function createApprovals(api) {
  let held = [];
  const list = $('#held-list');

  function left(p) {
    const s = Math.max(0, Math.round((new Date(p.expires) - Date.now()) / 1000));
    return s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
  }

  function card(p) {
    const scope = h('select', { class: 'scope', 'aria-label': 'scope' },
      h('option', { value: 'once' }, 'this call only'),
      h('option', { value: 'session' }, 'this session (same tool and arguments)'),
      h('option', { value: 'minutes' }, 'for N minutes (same tool and arguments)'));
    const minutes = h('input', { class: 'minutes', type: 'number', min: '1', max: '10080', value: '15', 'aria-label': 'minutes' });
    const reason = h('input', { class: 'reason', type: 'text', placeholder: 'reason (shown on deny)', 'aria-label': 'reason' });
    const status = h('span', { class: 'status error' });
    const decide = (verb) => async (e) => {
      const buttons = e.target.closest('.controls').querySelectorAll('button');
      buttons.forEach((b) => { b.disabled = true; });
      try {
        await api.post(`/approvals/${encodeURIComponent(p.id)}/${verb}`, {
          reason: reason.value, scope: scope.value, minutes: scope.value === 'minutes' ? Number(minutes.value) : 0,
        });
        status.textContent = '';
        held = held.filter((x) => x.id !== p.id);
        render();
      } catch (err) {
        status.textContent = err.message;
        buttons.forEach((b) => { b.disabled = false; });
      }
    };
    return h('article', { class: 'held', dataset: { id: p.id } },
      h('h3', {}, actionBadge('held'), ' ', h('span', { class: 'tool' }, p.tool || p.method), ' ', h('span', { class: 'muted' }, `on ${p.server || '?'}`)),
      h('dl', {},
        h('dt', {}, 'Reason'), h('dd', {}, p.reason || ''),
        h('dt', {}, 'Rule'), h('dd', {}, `${p.rule || ''} (stage ${p.stage || '?'})`),
        h('dt', {}, 'Held by'), h('dd', {}, p.gateway || ''),
        h('dt', {}, 'Session'), h('dd', { class: 'mono' }, p.session || '—'),
        h('dt', {}, 'Agent'), h('dd', {}, p.agent || '—'),
        h('dt', {}, 'Time left'), h('dd', { class: 'left' }, `${left(p)} (then ${p.on_timeout})`),
        h('dt', {}, 'Audit id'), h('dd', { class: 'mono' }, p.id)),
      p.arguments ? h('pre', { class: 'args' }, pretty(p.arguments)) : h('p', { class: 'muted' }, `arguments sha256 ${p.arguments_sha256 || '—'}`),
      h('div', { class: 'controls' },
        h('label', {}, 'Scope', scope), h('label', {}, 'Minutes', minutes), h('label', {}, 'Reason', reason),
        h('button', { type: 'button', class: 'approve', onclick: decide('approve') }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: decide('deny') }, 'Deny'),
        status));
  }

  function render() {
    // Keep cards whose controls are being used: rebuild only what changed.
    const want = new Set(held.map((p) => p.id));
    for (const el of [...list.children]) if (!want.has(el.dataset.id)) el.remove();
    const have = new Set([...list.children].map((el) => el.dataset.id));
    for (const p of held) if (!have.has(p.id)) list.append(card(p));
    $('#held-empty').hidden = held.length > 0;
    const n = held.length;
    const badge = $('#badge');
    badge.textContent = String(n);
    badge.hidden = n === 0;
    const alert = $('#alert');
    alert.hidden = n === 0;
    alert.textContent = n === 1 ? '1 call is waiting for approval' : `${n} calls are waiting for approval`;
    document.title = n ? `(${n}) Palisade` : 'Palisade';
  }

  setInterval(() => {
    for (const el of list.querySelectorAll('.held')) {
      const p = held.find((x) => x.id === el.dataset.id);
      if (p) el.querySelector('.left').textContent = `${left(p)} (then ${p.on_timeout})`;
    }
  }, 1000);

  return {
    async load() {
      let r;
      try {
        r = await api.get('/approvals');
      } catch (e) {
        if (e.status !== 404) throw e;
        $('#held-empty').textContent = 'Approvals are disabled on this gateway: ask verdicts follow the bundle\'s fallback.';
        return;
      }
      held = r.approvals || [];
      render();
    },
  };
}
