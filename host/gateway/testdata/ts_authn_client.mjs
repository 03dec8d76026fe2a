// The official TypeScript SDK client with an access token, run by TestAuthnTypeScriptClient:
// one session on the URL, with `Authorization: Bearer <token>` on every request, lists the
// tools and calls the one named, printing one JSON line per step.
// Usage: node ts_authn_client.mjs <node_modules> <mcp url> <token> <tool> <arguments json>
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nodeModules, url, token, tool, argsJSON] = process.argv.slice(2);
const sdk = join(nodeModules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);

const client = new Client({ name: 'palisade-ts-authn-test', version: '1.0.0' });
const headers = token ? { Authorization: `Bearer ${token}` } : {};
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
} catch (e) {
  console.log(JSON.stringify({ step: 'connect', error: String(e.message), code: e.code }));
  process.exit(0);
}
const tools = await client.listTools();
console.log(JSON.stringify({ step: 'tools/list', tools: tools.tools.map((t) => t.name) }));
try {
  const r = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
  const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  console.log(JSON.stringify({ step: tool, text, isError: !!r.isError }));
} catch (e) {
  console.log(JSON.stringify({ step: tool, code: e.code, error: String(e.message) }));
}
await client.close();
