// Passkeys (WebAuthn) for the dashboard: sign in with one, and register one (your own, or, as
// an admin, a named person's with a role). The admin API checks everything (host/admin
// passkeys.go); this file only converts between its JSON (base64url) and the browser's
// ArrayBuffers.

const b64u = {
  decode(s) {
    const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
    return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
  },
  encode(buf) {
    let s = '';
    for (const c of new Uint8Array(buf)) s += String.fromCharCode(c);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  },
};

function creationOptions(o) {
  const pk = { ...o.publicKey, challenge: b64u.decode(o.publicKey.challenge), user: { ...o.publicKey.user, id: b64u.decode(o.publicKey.user.id) } };
  if (pk.excludeCredentials) pk.excludeCredentials = pk.excludeCredentials.map((c) => ({ ...c, id: b64u.decode(c.id) }));
  return { publicKey: pk };
}

function requestOptions(o) {
  const pk = { ...o.publicKey, challenge: b64u.decode(o.publicKey.challenge) };
  if (pk.allowCredentials) pk.allowCredentials = pk.allowCredentials.map((c) => ({ ...c, id: b64u.decode(c.id) }));
  return { publicKey: pk, mediation: o.mediation || undefined };
}

function credentialJSON(cred) {
  const r = cred.response;
  const response = { clientDataJSON: b64u.encode(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = b64u.encode(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  } else {
    response.authenticatorData = b64u.encode(r.authenticatorData);
    response.signature = b64u.encode(r.signature);
    if (r.userHandle) response.userHandle = b64u.encode(r.userHandle);
  }
  return { id: cred.id, rawId: b64u.encode(cred.rawId), type: cred.type, response,
    authenticatorAttachment: cred.authenticatorAttachment || undefined,
    clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {} };
}

async function postJSON(url, body) {
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || `${r.status} ${r.statusText}`);
  return data;
}

// available reports whether the gateway offers passkeys and the browser can use them.
export async function available(apiBase) {
  if (!window.PublicKeyCredential) return false;
  try { return (await (await fetch(`${apiBase}/passkeys`)).json()).enabled === true; } catch { return false; }
}

// signIn asks the browser for a passkey and trades it for a session cookie; it returns who.
export async function signIn(apiBase) {
  const b = await postJSON(`${apiBase}/passkeys/login/begin`);
  const cred = await navigator.credentials.get(requestOptions(b.options));
  return postJSON(`${apiBase}/passkeys/login/finish?ceremony=${encodeURIComponent(b.ceremony)}`, credentialJSON(cred));
}

// register creates a passkey through api (the caller's session or token): for the caller
// when who is empty, else for who = { name, role } (admin).
export async function register(api, who) {
  const b = await api.post('/passkeys/register/begin', who || {});
  const cred = await navigator.credentials.create(creationOptions(b.options));
  return api.post(`/passkeys/register/finish?ceremony=${encodeURIComponent(b.ceremony)}`, credentialJSON(cred));
}
