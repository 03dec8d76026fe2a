// Palisade dashboard: sign in with the identity provider (a session cookie) or, break-glass,
// with the admin token; then live decisions, the stored history, held calls, the chain and the
// playground, all from
// the documented admin API (host/admin/README.md).
import { API, Unauthorized } from './api.js';
import { $ } from './dom.js';
import { createLive } from './live.js';
import { createApprovals } from './approvals.js';
import { createChain } from './chain.js';
import { createPlayground } from './playground.js';
import { createHistory } from './history.js';
import * as passkey from './passkey.js';

const VIEWS = ['live', 'history', 'approvals', 'chain', 'playground'];
let api = null; // one client; the token changes on login
let views = null; // created once: their listeners must not pile up across logins
let session = null; // { abort }
let passkeys = false; // the gateway offers passkeys and the browser can use them

function showLogin(message) {
  if (session) { session.abort.abort(); session = null; }
  for (const v of VIEWS) $(`#view-${v}`).hidden = true;
  $('#login').hidden = false;
  $('#logout').hidden = true;
  $('#passkey-add').hidden = true;
  $('#passkeys').hidden = true;
  $('#who').hidden = true;
  $('#alert').hidden = true;
  const e = $('#login-error');
  e.textContent = message || '';
  e.hidden = !message;
  $('#token').focus();
}

function route() {
  if (!session) return;
  const name = VIEWS.includes(location.hash.slice(1)) ? location.hash.slice(1) : 'live';
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== name;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === name);
  if (name === 'chain') views.chain.load().catch(fail);
  if (name === 'history') views.history.load().catch(fail);
}

function fail(e) {
  if (e instanceof Unauthorized) { sessionStorage.removeItem('palisade.token'); showLogin('The token was refused.'); }
  else console.warn(e);
}

// start opens the dashboard with token, or with the sign-in session's cookie when token is ''
// (quiet: no session is not an error, the login page shows).
async function start(token, quiet) {
  if (session) { session.abort.abort(); session = null; }
  api.token = token;
  let me;
  try { me = await api.get('/whoami'); } catch (e) {
    if (e instanceof Unauthorized) { showLogin(quiet ? '' : 'The token was refused.'); return; }
    showLogin(`Cannot reach the admin API: ${e.message}`);
    return;
  }
  if (token) sessionStorage.setItem('palisade.token', token);
  $('#login').hidden = true;
  $('#logout').hidden = false;
  $('#passkey-add').hidden = !passkeys;
  const admin = me.role === 'admin';
  $('#passkey-for').hidden = !admin;
  $('#passkey-role-l').hidden = !admin;
  $('#passkey-name').required = !!me.break_glass;
  $('#who').textContent = `${me.name} (${me.role}${me.via === 'passkey' ? ', passkey' : ''})`;
  $('#who').hidden = false;
  const abort = new AbortController();
  session = { abort };
  route();
  let chainTimer = null;
  const onEvent = (name, data) => {
    if (name === 'held') {
      views.live.add(data); // shown as held until the call's decision arrives
    } else if (name === 'decision') {
      views.live.add(data);
      views.history.decided(data);
      if (!$('#view-chain').hidden && !chainTimer) {
        chainTimer = setTimeout(() => { chainTimer = null; views.chain.load().catch(fail); }, 500);
      }
    } else if (name === 'approval') {
      views.approvals.load().catch(fail);
    }
  };
  const onState = (up) => {
    const c = $('#conn');
    c.textContent = up ? 'live' : 'offline';
    c.className = `conn ${up ? 'on' : 'off'}`;
    if (up) { views.live.load().catch(fail); views.approvals.load().catch(fail); }
  };
  api.stream('/events', onEvent, onState, abort.signal).catch(fail);
  // A second source of truth for the queue, should an event be missed.
  const poll = setInterval(() => { if (abort.signal.aborted) clearInterval(poll); else views.approvals.load().catch(fail); }, 5000);
}

async function main() {
  if (!location.hash) history.replaceState(null, '', '#live');
  let apiBase = '/admin/api';
  try {
    const r = await fetch('config.json');
    if (r.ok) apiBase = (await r.json()).api || apiBase;
  } catch { /* default prefix */ }
  api = new API(apiBase, '');
  views = { live: createLive(api), approvals: createApprovals(api), chain: createChain(api), playground: createPlayground(api), history: createHistory(api) };
  try {
    const o = await (await fetch(`${apiBase}/oidc`)).json();
    if (o.enabled) {
      $('#oidc-login').textContent = `Sign in with ${o.name}`;
      $('#oidc-login').href = o.login;
      $('#oidc').hidden = false;
    }
  } catch { /* no sign-in offered */ }
  passkeys = await passkey.available(apiBase);
  $('#passkey').hidden = !passkeys;
  $('#passkey-login').addEventListener('click', async () => {
    try {
      await passkey.signIn(apiBase);
      start('');
    } catch (e) {
      showLogin(`Passkey sign-in failed: ${e.message}`);
    }
  });
  $('#passkey-add').addEventListener('click', () => { $('#passkeys').hidden = false; $('#passkey-status').textContent = ''; });
  $('#passkey-close').addEventListener('click', () => { $('#passkeys').hidden = true; });
  $('#passkey-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = $('#passkey-name').value.trim();
    const st = $('#passkey-status');
    st.textContent = 'Waiting for the authenticator…';
    try {
      const r = await passkey.register(api, name ? { name, role: $('#passkey-role').value } : null);
      st.textContent = `Registered a passkey for ${r.name} (${r.role}).`;
    } catch (err) {
      st.textContent = `Not registered: ${err.message}`;
    }
  });
  $('#login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    start($('#token').value.trim());
  });
  $('#logout').addEventListener('click', async () => {
    if (!api.token) await fetch(`${apiBase}/logout`, { method: 'POST' }).catch(() => {});
    sessionStorage.removeItem('palisade.token');
    api.token = '';
    showLogin();
  });
  window.addEventListener('hashchange', route);
  // A one-time login link (#login=CODE, printed by the gateway at start): trade the code for
  // the token once, and take it out of the address bar and history.
  const code = new URLSearchParams(location.hash.slice(1)).get('login');
  if (code) {
    history.replaceState(null, '', location.pathname);
    try {
      const r = await api.request('POST', '/login', { code });
      start(r.token);
    } catch (e) {
      showLogin(`The login link did not work: ${e.message}`);
    }
    return;
  }
  const token = sessionStorage.getItem('palisade.token');
  start(token || '', !token);
}

main();
