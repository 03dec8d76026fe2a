// A person signs in to the dashboard with a passkey (WebAuthn) in headless Debian Chromium,
// whose virtual authenticator (DevTools protocol, WebAuthn domain) stands in for a security key
// or a phone: registered by an admin for a named person with a role, then used alone to sign in
// and approve a held call; the audit names that person. A removed passkey signs in no more.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startStack, mcpClient, until, outDir, token } from './harness.js';

let stack;
let client;
let origin; // the dashboard's origin: localhost (WebAuthn takes no IP address as its RP id)

before(async () => {
  stack = await startStack({
    async configure(base) {
      origin = base.replace('127.0.0.1', 'localhost');
      return { admin: `{token: ${token}, passkeys: {origins: ["${origin}"]}}` };
    },
  });
  client = await mcpClient(stack.base);
});

after(async () => {
  if (process.exitCode && stack) console.error(stack.logs());
  await client?.close().catch(() => {});
  await stack?.stop();
});

test('an admin registers a passkey for carol; carol signs in with it alone and approves a held call', async () => {
  const { page, browser } = stack;
  await page.goto(`${origin}/ui/`);
  const cdp = await browser.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  // The operator logs in with the break-glass token and registers carol's passkey.
  await page.locator('#passkey-login').waitFor({ timeout: 10000 });
  await page.fill('#token', token);
  await page.click('#login-btn');
  await page.locator('#passkey-add:not([hidden])').waitFor({ timeout: 10000 });
  await page.click('#passkey-add');
  await page.fill('#passkey-name', 'carol@example.com');
  await page.selectOption('#passkey-role', 'approver');
  await page.click('#passkey-register');
  await until('registered', async () => /Registered a passkey for carol@example.com \(approver\)/.test(await page.textContent('#passkey-status')));
  const creds = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  assert.equal(creds.length, 1);
  assert.equal(creds[0].isResidentCredential, true);
  await page.screenshot({ path: join(outDir, 'passkey-registered.png'), fullPage: true });

  // Log out; carol signs in with the passkey: no token, no identity provider.
  await page.click('#logout');
  await page.locator('#login:not([hidden])').waitFor({ timeout: 10000 });
  await page.click('#passkey-login');
  await page.locator('#who:not([hidden])').waitFor({ timeout: 10000 });
  assert.match(await page.textContent('#who'), /carol@example.com \(approver, passkey\)/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('palisade.token')), null, 'the token was kept in the browser');

  const call = client.callTool({ name: 'echo', arguments: { message: 'hold for carol' } });
  const held = await until('held call', async () => (await stack.api('GET', '/approvals')).approvals.find((p) => JSON.stringify(p.arguments || {}).includes('hold for carol')));
  await page.goto(`${origin}/ui/#approvals`);
  const card = page.locator(`.held[data-id="${held.id}"]`);
  await card.waitFor({ timeout: 10000 });
  await card.locator('button.approve').click();
  const r = await call;
  assert.equal(r.content[0].text, 'Echo: hold for carol');
  const ev = await until('approval event', async () => {
    const d = await stack.api('GET', '/decisions?limit=0');
    return d.events.find((e) => e.kind === 'approval' && e.approval?.id === held.id);
  });
  assert.equal(ev.approval.decided_by, 'passkey#carol@example.com');
  assert.equal(ev.approval.decision, 'approved');
  assert.ok((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0].signCount >= 1);
  await page.screenshot({ path: join(outDir, 'passkey-approver.png'), fullPage: true });

  // The operator removes the passkey: carol's session ends and the passkey signs in no more.
  const list = await stack.api('GET', '/passkeys/list');
  assert.equal(list.passkeys.length, 1);
  const del = await fetch(`${stack.base}/admin/api/passkeys/${list.passkeys[0].credential}`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
  assert.equal(del.status, 204);
  assert.equal(await page.evaluate(async () => (await fetch('/admin/api/whoami')).status), 401);
  await page.goto(`${origin}/ui/`);
  await page.click('#passkey-login');
  await until('refusal shown', async () => /Passkey sign-in failed/.test(await page.textContent('#login-error')));
});
