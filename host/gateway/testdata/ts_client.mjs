// The official TypeScript SDK client, run by TestStdioUpstreamTypeScriptClient: one session on
// the gateway's aggregate /mcp lists the tools and makes the calls named on the command line,
// printing one JSON line per step. Usage: node ts_client.mjs <node_modules> <mcp url> <calls json>
// where calls is [{"name": tool, "arguments": {...}}, ...].
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nodeModules, url, callsJSON] = process.argv.slice(2);
const sdk = join(nodeModules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);

const client = new Client({ name: 'palisade-ts-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tools = await client.listTools();
console.log(JSON.stringify({ step: 'tools/list', tools: tools.tools.map((t) => t.name) }));
for (const call of JSON.parse(callsJSON)) {
  try {
    const r = await client.callTool(call);
    const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
    console.log(JSON.stringify({ step: call.name, text, isError: !!r.isError }));
  } catch (e) {
    console.log(JSON.stringify({ step: call.name, code: e.code, error: String(e.message) }));
  }
}
await client.close();
