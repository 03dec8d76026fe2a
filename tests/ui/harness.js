// Starts what the dashboard tests need, all real and on loopback: the MCP upstream
// (@modelcontextprotocol/server-everything from testdata/npm), `palisade serve` with the
// approvals test bundle (embedded NATS on a random port), headless Debian Chromium through
// playwright-core, and an MCP client from the official TypeScript SDK.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, cpSync, copyFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const build = process.env.PALISADE_BUILD || join(root, 'build');
export const outDir = join(root, 'test-output', 'ui');
export const token = 'ui-test-token';

export const bin = process.env.PALISADE_BIN || join(build, 'web', 'palisade');
const rulesWasm = process.env.PALISADE_RULES_WASM || join(build, 'web', 'rules.wasm');
const npmModules = join(root, 'testdata', 'npm', 'node_modules');
const testopBin = process.env.PALISADE_TESTOP || join(build, 'web', 'testop');

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
}

// until polls fn (async, truthy = done) until the deadline; it is a deadline, not a timing.
export async function until(what, fn, ms = 30000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function start(cmd, args, opts, name) {
  const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  p.stdout.on('data', (b) => { log += b; });
  p.stderr.on('data', (b) => { log += b; });
  p.log = () => log;
  p.name = name;
  return p;
}

// startOP runs the test OpenID provider (host/internal/testop, built by `make test-web`) with
// cfg ({clients, users}) and returns { issuer, proc }.
export async function startOP(cfg) {
  if (!existsSync(testopBin)) throw new Error(`testop missing at ${testopBin}: run \`make test-web\``);
  const work = mkdtempSync(join(tmpdir(), 'palisade-op-'));
  writeFileSync(join(work, 'op.json'), JSON.stringify(cfg));
  const proc = start(testopBin, ['-config', join(work, 'op.json')], {}, 'testop');
  const issuer = await until('testop issuer', async () => {
    if (proc.exitCode !== null) throw new Error(`testop exited ${proc.exitCode}:\n${proc.log()}`);
    return proc.log().match(/issuer (http\S+)/)?.[1];
  });
  return { issuer, proc };
}

// startStack starts the stack; opts.configure(base), when given, returns { admin, procs }:
// the gateway config's admin: value (YAML flow) and processes to stop with the stack.
export async function startStack(opts = {}) {
  for (const [what, p] of [['palisade binary', bin], ['rules plugin', rulesWasm], ['testdata/npm (make setup)', join(npmModules, '@modelcontextprotocol', 'server-everything')], ['chromium', '/usr/bin/chromium']]) {
    if (!existsSync(p)) throw new Error(`${what} missing at ${p}: run \`make setup-web\` and \`make test-web\``);
  }
  mkdirSync(outDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'palisade-ui-'));
  const procs = [];

  // Upstream.
  const upPort = await freePort();
  const up = start('node', [join(npmModules, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'streamableHttp'],
    { env: { ...process.env, PORT: String(upPort) } }, 'server-everything');
  procs.push(up);
  const upURL = `http://127.0.0.1:${upPort}/mcp`;
  await until('server-everything', async () => (await fetch(upURL, { method: 'GET' }).catch(() => null)) !== null);

  // Bundle: the test bundle with the rules plugin built by `make test-web`, pinned.
  const bundle = join(work, 'bundle');
  cpSync(join(root, 'tests', 'ui', 'bundle'), bundle, { recursive: true });
  mkdirSync(join(bundle, 'plugins'), { recursive: true });
  copyFileSync(rulesWasm, join(bundle, 'plugins', 'rules.wasm'));
  execFileSync(bin, ['bundle', 'pin', bundle]);

  // Gateway.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let admin = `{token: ${token}}`;
  if (opts.configure) {
    const c = await opts.configure(base);
    admin = c.admin || admin;
    procs.push(...(c.procs || []));
  }
  writeFileSync(join(work, 'palisade.yaml'), `listen: 127.0.0.1:${port}
data_dir: ${join(work, 'data')}
bundle: ${bundle}
bundles: {allow_unsigned: true}
upstreams: [{name: everything, url: "${upURL}"}]
nats: {port: -1}
admin: ${admin}
approvals:
  timeout: 2m
  progress_every: 1s
`);
  const gw = start(bin, ['serve', '--config', join(work, 'palisade.yaml')], { env: { ...process.env } }, 'palisade');
  procs.push(gw);
  await until('gateway ready', async () => {
    if (gw.exitCode !== null) throw new Error(`palisade exited ${gw.exitCode}:\n${gw.log()}`);
    return (await fetch(`${base}/readyz`).catch(() => ({ ok: false }))).ok;
  }, 60000);

  // Browser: Debian chromium, a fresh profile, no background networking (the network is closed).
  const browser = await chromium.launchPersistentContext(join(work, 'chromium'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
  });
  const page = browser.pages()[0] || await browser.newPage();

  return {
    base, page, browser, gateway: gw, bundle,
    async api(method, path, body) {
      const r = await fetch(`${base}/admin/api${path}`, {
        method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return r.json();
    },
    async stop() {
      await browser.close().catch(() => {});
      for (const p of procs.reverse()) {
        if (p.exitCode === null) {
          p.kill('SIGTERM');
          await Promise.race([new Promise((r) => p.once('exit', r)), new Promise((r) => setTimeout(r, 15000))]);
          if (p.exitCode === null) p.kill('SIGKILL');
        }
      }
    },
    logs() { return procs.map((p) => `--- ${p.name}\n${p.log()}`).join('\n'); },
  };
}

// mcpClient connects the official TypeScript SDK client to the gateway.
export async function mcpClient(base) {
  const sdk = join(npmModules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
  const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
  const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);
  const client = new Client({ name: 'palisade-ui-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/everything`)));
  return client;
}
