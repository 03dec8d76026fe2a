// The History tab in headless Debian Chromium (playwright-core), against a real `palisade serve`
// (embedded NATS: history read from the signed audit stream) in front of a real MCP server,
// with a real MCP client: search and filters, a held call shown as held while it waits, the
// drill-down, a label on a decision, the chart, a CSV export parsed back, and the live feed's
// held row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { startStack, mcpClient, until, outDir, token } from './harness.js';

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

function heldOnGateway(text) {
  return until(`held call "${text}"`, async () => {
    const r = await stack.api('GET', '/approvals');
    return r.approvals.find((p) => JSON.stringify(p.arguments || {}).includes(text));
  });
}

// search runs the History tab's search and waits until fn(rows) holds, searching again meanwhile
// (the stream is read as events arrive).
async function searchUntil(what, fn) {
  const { page } = stack;
  return until(what, async () => {
    await page.click('#h-search');
    await page.locator('#h-status:not(:empty)').waitFor({ timeout: 10000 });
    await until('search done', async () => !(await page.textContent('#h-status')).startsWith('Searching'), 10000);
    const rows = await page.$$eval('#h-table tbody tr', (trs) => trs.map((tr) => ({
      id: tr.dataset.id, action: tr.dataset.action, tool: tr.children[3].textContent, rule: tr.children[4].textContent,
    })));
    return fn(rows) ? rows : null;
  });
}

test('history: search, a held call shown as held, its drill-down, the chart and a CSV export', async () => {
  const { page } = stack;
  assert.equal((await client.callTool({ name: 'echo', arguments: { message: 'history one' } })).content[0].text, 'Echo: history one');
  const denied = await client.callTool({ name: 'get-env', arguments: {} }).then(() => null, (e) => e);
  assert.ok(denied, 'get-env was not denied');
  const call = client.callTool({ name: 'echo', arguments: { message: 'hold for the history' } });
  const held = await heldOnGateway('hold for the history');

  await page.goto(`${stack.base}/ui/#history`);
  await page.locator('#view-history:not([hidden])').waitFor({ timeout: 10000 });
  // The held call is in the stored history as held while it waits.
  let rows = await searchUntil('the held call in the history', (rs) => rs.some((r) => r.id === held.id && r.action === 'held') &&
    rs.some((r) => r.action === 'deny') && rs.some((r) => r.action === 'allow'));
  assert.ok(rows.length >= 3);
  await page.click(`#h-table tr[data-id="${held.id}"]`);
  await page.locator(`#h-detail[data-id="${held.id}"][data-state="held"]`).waitFor({ timeout: 10000 });
  assert.match(await page.textContent('#h-summary'), /hold-echo/);
  await shot('history-held');

  // Approved: the decision replaces the held record; the drill-down shows its stages and story.
  await stack.api('POST', `/approvals/${held.id}/approve`, {});
  assert.equal((await call).content[0].text, 'Echo: hold for the history');
  // The live stream's decision flips the held row at once, without a search.
  await page.locator(`#h-table tr[data-id="${held.id}"][data-action="allow"]`).waitFor({ timeout: 10000 });
  rows = await searchUntil('the decided call in the history', (rs) => rs.some((r) => r.id === held.id && r.action === 'allow'));
  assert.equal(rows.filter((r) => r.id === held.id).length, 1, 'the held record is still listed beside its decision');
  await page.click(`#h-table tr[data-id="${held.id}"]`);
  await page.locator(`#h-detail[data-id="${held.id}"][data-state="allow"]`).waitFor({ timeout: 10000 });
  assert.equal(await page.textContent('#h-stages tr[data-stage="rules"] td:nth-child(3)'), 'ask');
  assert.match(await page.textContent('#h-summary'), /approved by admin-token/);
  assert.match(await page.textContent('#h-summary'), /verified/);
  const related = await page.textContent('#h-related');
  assert.match(related, /held for a person/);
  assert.match(related, /approval approved/);

  // A person labels the decision; the label is a signed audit event the gateway lists for it.
  await page.selectOption('#h-label-verdict', 'false_positive');
  await page.fill('#h-label-note', 'a test message, not an attack');
  await page.click('#h-label-btn');
  await page.locator('#h-labels li[data-verdict="false_positive"]').waitFor({ timeout: 10000 });
  assert.match(await page.textContent('#h-label-status'), /Labelled false_positive/);
  assert.match(await page.textContent('#h-labels'), /false_positive by admin-token: a test message, not an attack/);
  const labels = await until('the label on GET /labels', async () => {
    const r = await stack.api('GET', `/labels?ref=${held.id}`);
    return r.labels.length === 1 ? r.labels : null;
  });
  assert.equal(labels[0].label.ref, held.id);
  assert.equal(labels[0].tool, 'echo');
  assert.equal(labels[0].kind, 'label');
  await shot('history-label');

  // The chart counts by action over the stored decisions.
  await page.selectOption('#h-bucket', '1m');
  await until('chart bars', async () => (await page.locator('#h-chart rect.bar').count()) >= 2);
  const keys = await page.$$eval('#h-legend .key', (ks) => ks.map((k) => k.dataset.key));
  assert.ok(keys.includes('allow') && keys.includes('deny'), `legend ${keys}`);
  const total = await page.$$eval('#h-chart rect.bar', (rs) => rs.reduce((n, r) => n + Number(r.dataset.count), 0));
  assert.equal(total, rows.length, 'the chart counts what the table lists');
  await shot('history');

  // Filter to denials; the export of that filter parses back to the same rows.
  await page.selectOption('#h-action', 'deny');
  rows = await searchUntil('only denials', (rs) => rs.length > 0 && rs.every((r) => r.action === 'deny'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#h-export-csv')]);
  const csv = readFileSync(await download.path(), 'utf8').trim().split('\n');
  const header = csv[0].split(',');
  assert.equal(header[0], 'time');
  const action = header.indexOf('action');
  const id = header.indexOf('audit_id');
  assert.equal(csv.length - 1, rows.length, 'the export holds the filter\'s rows');
  for (const line of csv.slice(1)) assert.equal(line.split(',')[action], 'deny');
  assert.deepEqual(csv.slice(1).map((l) => l.split(',')[id]).sort(), rows.map((r) => r.id).sort());
  await page.selectOption('#h-action', '');
});

test('live: a held call shows as held until its decision arrives', async () => {
  const { page } = stack;
  await page.goto(`${stack.base}/ui/#live`);
  await page.locator('#view-live:not([hidden])').waitFor({ timeout: 10000 });
  const call = client.callTool({ name: 'echo', arguments: { message: 'hold in the live feed' } });
  const held = await heldOnGateway('hold in the live feed');
  const row = page.locator(`#events tr[data-call="${held.id}"][data-action="held"]`);
  await row.waitFor({ timeout: 10000 });
  await shot('live-held');
  await stack.api('POST', `/approvals/${held.id}/approve`, {});
  await call;
  await page.locator(`#events tr[data-id="${held.id}"][data-action="allow"]`).waitFor({ timeout: 10000 });
  await row.waitFor({ state: 'detached', timeout: 10000 });
});
