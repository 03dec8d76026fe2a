#!/usr/bin/env bash
# Started by `make run`: server-everything (npm, streamable HTTP) on 127.0.0.1:3001, then the
# gateway on 127.0.0.1:8420 with the example bundle and an embedded NATS on 127.0.0.1:4222.
set -euo pipefail
cd "$(dirname "$0")/.."
UP_PORT=${UP_PORT:-3001}
PORT=$UP_PORT node testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp &
UP_PID=$!
trap 'kill $UP_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  (exec 3<>/dev/tcp/127.0.0.1/$UP_PORT) 2>/dev/null && break
  sleep 0.1
done
echo "server-everything on http://127.0.0.1:$UP_PORT/mcp"
echo "the gateway prints its dashboard link (logs in once) and the audit tail command below; then try:"
echo "  curl -s http://127.0.0.1:8420/readyz"
echo "  npx -y @modelcontextprotocol/inspector --cli http://127.0.0.1:8420/mcp --transport http --method tools/call --tool-name echo --tool-arg message=hello"
./build/palisade serve --config examples/palisade.yaml "$@"
