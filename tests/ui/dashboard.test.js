// Dashboard tests in headless Debian Chromium (playwright-core), against a real `palisade serve`
// in front of a real MCP server, with a real MCP client. Screenshots go to test-output/ui/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, cpSync } from 'node:fs';
import { startStack, mcpClient, until, outDir, token, bin } from './harness.js';

let stack;
let client;

before(async () => {
  stack = await startStack();
  client = await mcpClient(stack.base);
  const { page } = stack;
  await page.goto(`${stack.base}/ui/`);
  await page.fill('#token', token);
  await page.click('#login-btn');
  await page.locator('#conn.on').waitFor({ timeout: 30000 });
});

after(async () => {
  if (process.exitCode && stack) console.error(stack.logs());
  await client?.close().catch(() => {});
  await stack?.stop();
});

const shot = (name) => stack.page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });

// heldOnGateway waits until the gateway's queue holds a call whose arguments contain text.
function heldOnGateway(text) {
  return until(`held call "${text}"`, async () => {
    const r = await stack.api('GET', '/approvals');
    return r.approvals.find((p) => JSON.stringify(p.arguments || {}).includes(text));
  });
}

test('a wrong token is refused', async () => {
  const page = await stack.browser.newPage();
  try {
    await page.goto(`${stack.base}/ui/`);
    await page.fill('#token', 'not-the-token');
    await page.click('#login-btn');
    await page.locator('#login-error:not([hidden])').waitFor({ timeout: 10000 });
    assert.match(await page.textContent('#login-error'), /refused/);
    assert.equal(await page.isVisible('#view-live'), false);
  } finally {
    await page.close();
  }
});

test('the one-time login link the gateway prints logs in once', async () => {
  const m = stack.gateway.log().match(/dashboard (http\S+#login=[0-9a-f]+)/);
  assert.ok(m, `no dashboard login link in the gateway's log:\n${stack.gateway.log()}`);
  const page = await stack.browser.newPage();
  try {
    await page.goto(m[1]);
    await page.locator('#conn.on').waitFor({ timeout: 30000 });
    assert.equal(page.url().includes('login='), false, 'the code stays in the address bar');
    await page.screenshot({ path: join(outDir, 'login-link.png'), fullPage: true });
  } finally {
    await page.close();
  }
  const again = await stack.browser.newPage();
  try {
    await again.goto(m[1]);
    await again.locator('#login-error:not([hidden])').waitFor({ timeout: 10000 });
    assert.match(await again.textContent('#login-error'), /did not work/);
  } finally {
    await again.close();
  }
});

test('the live feed shows a call made by a real MCP client', async () => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#live`);
  const r = await client.callTool({ name: 'echo', arguments: { message: 'hello from the ui test' } });
  assert.equal(r.content[0].text, 'Echo: hello from the ui test');
  const row = page.locator('#events tbody tr.event', { hasText: 'echo' }).filter({ has: page.locator('.action.allow') }).first();
  await row.waitFor({ timeout: 10000 });
  assert.match(await row.textContent(), /rules: allow/);
  await row.click();
  await page.locator('#event-detail:not([hidden])').waitFor();
  const detail = JSON.parse(await page.textContent('#event-json'));
  assert.equal(detail.tool, 'echo');
  assert.equal(detail.action, 'allow');
  assert.equal(detail.bundle.name, 'approvals-demo');
  // Filters: deny hides the allowed call.
  await page.selectOption('#f-action', 'deny');
  await until('filtered rows', async () => (await page.locator('#events tbody tr.event .action.allow').count()) === 0);
  await page.selectOption('#f-action', '');
  await shot('live');
});

test('a held call appears within a second; approving releases the client with the upstream result', async (t) => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#approvals`);
  await page.locator('#conn.on').waitFor({ timeout: 10000 });
  const call = client.callTool({ name: 'echo', arguments: { message: 'hold the line' } });
  const held = await heldOnGateway('hold the line');
  const card = page.locator(`.held[data-id="${held.id}"]`);
  await card.waitFor({ timeout: 1000 }); // the bound: in the queue within a second
  t.diagnostic(`held call on screen ${Date.now() - Date.parse(held.time)} ms after the gateway held it`);
  assert.equal(await page.textContent('#badge'), '1');
  assert.equal(await page.isVisible('#alert'), true);
  assert.match(await page.textContent('#alert'), /1 call is waiting/);
  assert.match(await card.textContent(), /hold-echo/);
  await shot('approvals');
  await card.locator('button.approve').click();
  const r = await call;
  assert.equal(r.content[0].text, 'Echo: hold the line');
  await card.waitFor({ state: 'detached', timeout: 10000 });
  await until('badge cleared', async () => page.locator('#badge').isHidden());
  // The decision names who approved it.
  const ev = await until('approval event', async () => {
    const r = await stack.api('GET', '/decisions?limit=0');
    return r.events.find((e) => e.kind === 'approval' && e.approval?.id === held.id);
  });
  assert.equal(ev.approval.decided_by, 'admin-token'); // the break-glass token, never a typed name
  assert.equal(ev.approval.decision, 'approved');
});

test('denying a held call returns -32001 to the client', async () => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#approvals`);
  // Settle the promise at once so its rejection is never "unhandled" while the UI works.
  const call = client.callTool({ name: 'echo', arguments: { message: 'hold and deny' } }).then(
    (r) => ({ r }), (e) => ({ e }));
  const held = await heldOnGateway('hold and deny');
  const card = page.locator(`.held[data-id="${held.id}"]`);
  await card.waitFor({ timeout: 1000 });
  await card.locator('input.reason').fill('not in production');
  await card.locator('button.deny').click();
  const { r, e } = await call;
  assert.equal(r, undefined, 'the denied call returned a result');
  assert.equal(e.code, -32001);
  assert.match(e.message, /not in production/);
});

test('approving for N minutes lets the same call through without holding it again', async () => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#approvals`);
  const args = { message: 'hold, then trust for a while' };
  const first = client.callTool({ name: 'echo', arguments: args });
  const held = await heldOnGateway('trust for a while');
  const card = page.locator(`.held[data-id="${held.id}"]`);
  await card.waitFor({ timeout: 1000 });
  await card.locator('select.scope').selectOption('minutes');
  await card.locator('input.minutes').fill('5');
  await card.locator('button.approve').click();
  assert.equal((await first).content[0].text, 'Echo: hold, then trust for a while');
  // The same tool and arguments again: granted at once, naming the approval that granted it.
  const second = await client.callTool({ name: 'echo', arguments: args });
  assert.equal(second.content[0].text, 'Echo: hold, then trust for a while');
  const ev = await until('granted decision', async () => {
    const r = await stack.api('GET', '/decisions?limit=0');
    return r.events.find((e) => e.kind === 'decision' && e.id !== held.id && e.approval?.id === held.id);
  });
  assert.equal(ev.approval.scope, 'minutes');
  assert.equal(ev.approval.decided_by, 'admin-token'); // the break-glass token, never a typed name
  assert.equal((await stack.api('GET', '/approvals')).count, 0);
});

test('the chain page shows stages, counts, the chart and the bundle', async () => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#chain`);
  await page.locator('#chain-bundle .name').waitFor({ timeout: 10000 });
  assert.equal(await page.textContent('#chain-bundle .name'), 'approvals-demo');
  assert.equal(await page.textContent('#chain-bundle .version'), '1.0.0');
  assert.match(await page.textContent('#chain-bundle .digest'), /^[0-9a-f]{64}$/);
  const calls = Number(await page.textContent('#chain-stages tr[data-stage="rules"] .calls'));
  assert.ok(calls >= 5, `rules stage calls = ${calls}`);
  assert.ok(await page.locator('#chain-chart rect').count() >= 3);
  await shot('chain');
});

test('the playground shows a deny for a path traversal without forwarding it', async () => {
  const { page } = stack;
  const before = (await stack.api('GET', '/decisions?limit=0')).events.length;
  await page.goto(`${stack.base}/ui/#playground`);
  await page.fill('#pg-server', 'everything');
  await page.fill('#pg-tool', 'read_file');
  await page.fill('#pg-args', '{"path": "../../../etc/passwd"}');
  await page.click('#pg-run');
  await page.locator('#pg-result:not([hidden])').waitFor({ timeout: 10000 });
  assert.equal(await page.getAttribute('#pg-outcome', 'data-outcome'), 'deny');
  assert.match(await page.textContent('#pg-summary'), /deny-path-traversal/);
  assert.match(await page.textContent('#pg-stages tr[data-stage="rules"]'), /path traversal/);
  await shot('playground');
  const after = (await stack.api('GET', '/decisions?limit=0')).events.length;
  assert.equal(after, before, 'the playground recorded an audit event');
});

test('bundle history: a new version is kept; activate and rollback switch the active bundle', async () => {
  const { page } = stack;
  // Publish 1.0.1 by editing the watched bundle folder.
  const manifest = join(stack.bundle, 'bundle.yaml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('version: 1.0.0', 'version: 1.0.1'));
  await until('1.0.1 active', async () => (await stack.api('GET', '/bundles')).active?.version === '1.0.1', 60000);
  await page.goto(`${stack.base}/ui/#live`);
  await page.goto(`${stack.base}/ui/#chain`);
  const version = () => page.textContent('#chain-bundle .version');
  await until('chain view shows 1.0.1', async () => (await version()) === '1.0.1');
  await until('two kept bundles listed', async () => (await page.locator('#bundles tbody tr').count()) === 2);
  await shot('chain-history');
  // Activate the older one from its row.
  const older = page.locator('#bundles tbody tr', { hasText: '1.0.0' });
  await older.locator('button').click();
  await until('1.0.0 active again', async () => (await stack.api('GET', '/bundles')).active?.version === '1.0.0');
  await until('chain view shows 1.0.0', async () => (await version()) === '1.0.0');
  // Roll back: the bundle active before, 1.0.1.
  await page.click('#rollback');
  await until('rolled back to 1.0.1', async () => (await stack.api('GET', '/bundles')).active?.version === '1.0.1');
  await until('chain view shows 1.0.1', async () => (await version()) === '1.0.1');
});

test('shadow bundle: loaded with the CLI, its disagreement listed, promoted from the Chain view', async () => {
  const { page } = stack;
  // A shadow that denies what the active bundle allows: echo.
  const dir = mkdtempSync(join(tmpdir(), 'palisade-ui-shadow-'));
  const shadow = join(dir, 'shadow');
  cpSync(stack.bundle, shadow, { recursive: true });
  const manifest = join(shadow, 'bundle.yaml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('name: approvals-demo', 'name: shadow-demo'));
  const rules = join(shadow, 'rules.yaml');
  writeFileSync(rules, readFileSync(rules, 'utf8').replace(/- id: allow-echo\n(\s+)priority: 100\n\s+action: allow/, '- id: shadow-deny-echo\n$1priority: 100\n$1action: deny'));
  const out = execFileSync(bin, ['bundle', 'shadow', shadow, '--url', stack.base, '--token', token]).toString();
  assert.match(out, /^shadow: shadow-demo/);

  const r = await client.callTool({ name: 'echo', arguments: { message: 'shadow check' } });
  assert.ok(!r.isError, 'the active bundle still decides: echo allowed');
  await page.goto(`${stack.base}/ui/#live`);
  await page.goto(`${stack.base}/ui/#chain`);
  await until('the shadow on the chain view', async () => (await page.textContent('#shadow-bundle')).includes('shadow-demo'));
  await until('the disagreement listed', async () => {
    await page.goto(`${stack.base}/ui/#live`);
    await page.goto(`${stack.base}/ui/#chain`);
    return page.locator('#shadow-disagreements tbody tr', { hasText: 'shadow-deny-echo' }).count();
  });
  await shot('chain-shadow');

  await page.click('#shadow-promote');
  await until('shadow-demo active', async () => (await stack.api('GET', '/bundles')).active?.name === 'shadow-demo');
  await until('chain view shows shadow-demo', async () => (await page.textContent('#chain-bundle .name')) === 'shadow-demo');
  assert.equal((await stack.api('GET', '/bundles/shadow')).shadow, null);
  const denied = await client.callTool({ name: 'echo', arguments: { message: 'after promote' } }).then(() => null, (e) => e);
  assert.ok(denied && String(denied.message).includes('denied'), `echo after promote: ${denied}`);
});
