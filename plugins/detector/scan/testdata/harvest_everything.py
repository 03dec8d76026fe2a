"""Harvest everything.jsonl: one session with @modelcontextprotocol/server-everything over stdio.

Usage (from the repository root, after the npm test dependencies are installed):
    python3 plugins/detector/scan/testdata/harvest_everything.py \
        testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
        plugins/detector/scan/testdata/everything.jsonl

Each tool is called once with the values its input schema suggests (enum: the first member,
default, else a placeholder of the type), each listed resource is read, each prompt got; the
list answers are kept. get-env's answer (the harvesting machine's environment) is replaced by a
plain one.
"""
import json, subprocess, sys
p = subprocess.Popen(["node", sys.argv[1], "stdio"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
nid = [0]
def rpc(method, params=None, notify=False):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None: msg["params"] = params
    if not notify:
        nid[0] += 1; msg["id"] = nid[0]
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    if notify: return None
    while True:
        line = p.stdout.readline()
        if not line: return None
        m = json.loads(line)
        if m.get("id") == nid[0] and ("result" in m or "error" in m): return m
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}})
rpc("notifications/initialized", notify=True)
out = open(sys.argv[2], "w")
PLAIN_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/home/dev",
             "LANG": "C.UTF-8", "TERM": "xterm-256color", "SHELL": "/bin/bash", "PWD": "/home/dev/project",
             "SHLVL": "1", "USER": "dev", "NODE_ENV": "development", "HOSTNAME": "devbox", "_": "/usr/bin/node"}
def save(method, tool, m, args=None):
    r = {"method": method, "tool": tool, "result": m.get("result")}
    if m.get("error"): r["error"] = m["error"]
    if tool == "get-env" and r["result"]:
        r["result"]["content"][0]["text"] = json.dumps(PLAIN_ENV, indent=2)
    if args is not None: r["arguments"] = args
    out.write(json.dumps(r) + "\n")
tl = rpc("tools/list"); save("tools/list", "", tl)
def sample(name, s):
    if "enum" in s: return s["enum"][0]
    if "default" in s: return s["default"]
    t = s.get("type")
    if t == "integer": return 2
    if t == "number": return 1.5
    if t == "boolean": return True
    if t == "array": return []
    if t == "object": return {}
    return "hello world"
for t in tl["result"]["tools"]:
    props = t.get("inputSchema", {}).get("properties", {})
    args = {k: sample(k, v) for k, v in props.items()}
    if t["name"] in ("longRunningOperation", "trigger-long-running-operation"): args = {"duration": 1, "steps": 1}
    m = rpc("tools/call", {"name": t["name"], "arguments": args})
    if m: save("tools/call", t["name"], m, args)
for meth, key in (("resources/list", "resources"), ("prompts/list", "prompts"), ("resources/templates/list", None)):
    m = rpc(meth); save(meth, "", m)
    if key and m and "result" in m:
        for r in m["result"][key][:20]:
            if key == "resources":
                mm = rpc("resources/read", {"uri": r["uri"]}); save("resources/read", r["uri"], mm)
            else:
                args = {a["name"]: ("Text" if a["name"] == "resourceType" else "1" if a["name"] == "resourceId" else "hello") for a in r.get("arguments", [])}
                mm = rpc("prompts/get", {"name": r["name"], "arguments": args}); save("prompts/get", r["name"], mm, args)
for u in ("demo://resource/dynamic/text/1", "demo://resource/dynamic/blob/1"):
    mm = rpc("resources/read", {"uri": u}); save("resources/read", u, mm)
p.kill()
