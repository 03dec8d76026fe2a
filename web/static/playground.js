// Playground: compose or paste a call, see the chain's verdict and each stage's output.
// POST /playground runs the request phase only: nothing is forwarded, held or audited.
import { h, $, actionBadge, fmtUS, pretty } from './dom.js';

export function createPlayground(api) {
  $('#pg-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const err = $('#pg-error');
    err.hidden = true;
    let body;
    try {
      const pasted = $('#pg-message').value.trim();
      if (pasted) {
        body = { message: JSON.parse(pasted), server: $('#pg-server').value.trim() };
      } else {
        const args = $('#pg-args').value.trim();
        body = { server: $('#pg-server').value.trim(), tool: $('#pg-tool').value.trim(), arguments: args ? JSON.parse(args) : {} };
      }
    } catch (x) {
      err.textContent = `Not JSON: ${x.message}`;
      err.hidden = false;
      return;
    }
    try {
      const r = await api.post('/playground', body);
      $('#pg-result').hidden = false;
      $('#pg-outcome').replaceChildren(actionBadge(r.outcome));
      $('#pg-outcome').dataset.outcome = r.outcome;
      $('#pg-summary').textContent = [
        r.action !== r.outcome ? `(chain said ${r.action})` : '',
        r.rule ? `rule ${r.rule}` : '', r.stage ? `stage ${r.stage}` : '', r.reason ? `— ${r.reason}` : '',
      ].filter(Boolean).join(' ');
      $('#pg-stages tbody').replaceChildren(...(r.stages || []).map((st) => h('tr', { dataset: { stage: st.stage } },
        h('td', {}, st.stage), h('td', {}, actionBadge(st.action)), h('td', {}, st.score ?? ''), h('td', {}, st.rule || ''),
        h('td', {}, st.reason || ''), h('td', {}, (st.labels || []).join(', ')), h('td', {}, fmtUS(st.latency_us || 0)), h('td', { class: 'error' }, st.error || ''))));
      $('#pg-envelope').textContent = pretty(r.envelope);
    } catch (x) {
      err.textContent = x.message;
      err.hidden = false;
    }
  });
  return {};
}
