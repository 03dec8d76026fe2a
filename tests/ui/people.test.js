// People sign in to the dashboard with the identity provider (the real test OpenID provider,
// host/internal/testop: authorization code with PKCE), in headless Debian Chromium. An approver
// approves a held call and the audit names her verified identity; a viewer cannot (403).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startStack, startOP, mcpClient, until, outDir } from './harness.js';

let stack;
let client;
let op;

before(async () => {
  stack = await startStack({
    async configure(base) {
      op = await startOP({
        clients: [{ id: 'dashboard', redirect_uris: [`${base}/admin/api/oidc/callback`] }],
        users: [
          { id: 'alice', claims: { groups: ['sre'], email: 'alice@example.com' } }, // the first: the login page's default
          { id: 'bob', claims: { groups: ['dev'], email: 'bob@example.com' } },
        ],
      });
      return {
        admin: `{token: ui-test-token, oidc: {issuer: "${op.issuer}", name: TestOP, client_id: dashboard, ` +
          `redirect_url: "${base}/admin/api/oidc/callback", roles: {claim: groups, viewer: [dev], approver: [sre]}}}`,
        procs: [op.proc],
      };
    },
  });
  client = await mcpClient(stack.base);
});

after(async () => {
  if (process.exitCode && stack) console.error(stack.logs());
  await client?.close().catch(() => {});
  await stack?.stop();
});

function heldOnGateway(text) {
  return until(`held call "${text}"`, async () => {
    const r = await stack.api('GET', '/approvals');
    return r.approvals.find((p) => JSON.stringify(p.arguments || {}).includes(text));
  });
}

test('a viewer sees the held call and cannot approve it; an approver signed in with the IdP approves it', async () => {
  const { page, browser } = stack;
  const call = client.callTool({ name: 'echo', arguments: { message: 'hold for a person' } });
  const held = await heldOnGateway('hold for a person');

  // bob (groups dev = viewer) signs in through the provider's login page.
  await page.goto(`${stack.base}/admin/api/oidc/login?login_hint=bob`);
  await page.waitForURL(`${stack.base}/ui/**`, { timeout: 10000 });
  await page.goto(`${stack.base}/ui/#approvals`);
  await page.locator('#who:not([hidden])').waitFor({ timeout: 10000 });
  assert.match(await page.textContent('#who'), /bob@example.com \(viewer\)/);
  const bobCard = page.locator(`.held[data-id="${held.id}"]`);
  await bobCard.waitFor({ timeout: 10000 });
  await bobCard.locator('button.approve').click();
  await until('403 shown', async () => /needs approver/.test(await bobCard.locator('.status').textContent()));
  await page.screenshot({ path: join(outDir, 'viewer-403.png'), fullPage: true });
  const status = await page.evaluate(async (id) => (await fetch(`/admin/api/approvals/${id}/approve`, { method: 'POST' })).status, held.id);
  assert.equal(status, 403);
  assert.equal((await stack.api('GET', '/approvals')).count, 1, 'the viewer released the call');

  // alice (groups sre = approver) clicks "Sign in with TestOP" on the login page.
  await page.click('#logout');
  await browser.clearCookies();
  await page.goto(`${stack.base}/ui/`);
  const signIn = page.locator('#oidc-login');
  await signIn.waitFor({ timeout: 10000 });
  assert.equal(await signIn.textContent(), 'Sign in with TestOP');
  await page.screenshot({ path: join(outDir, 'sign-in.png'), fullPage: true });
  await signIn.click();
  await page.waitForURL(`${stack.base}/ui/**`, { timeout: 10000 });
  await page.locator('#who:not([hidden])').waitFor({ timeout: 10000 });
  assert.match(await page.textContent('#who'), /alice@example.com \(approver\)/);
  await page.goto(`${stack.base}/ui/#approvals`);
  const card = page.locator(`.held[data-id="${held.id}"]`);
  await card.waitFor({ timeout: 10000 });
  await card.locator('button.approve').click();
  const r = await call;
  assert.equal(r.content[0].text, 'Echo: hold for a person');
  const ev = await until('approval event', async () => {
    const d = await stack.api('GET', '/decisions?limit=0');
    return d.events.find((e) => e.kind === 'approval' && e.approval?.id === held.id);
  });
  assert.equal(ev.approval.decided_by, `alice@example.com <${op.issuer}#alice>`);
  assert.equal(ev.approval.decision, 'approved');
  await page.screenshot({ path: join(outDir, 'approver.png'), fullPage: true });
});
