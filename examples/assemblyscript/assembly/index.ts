// ratelimit: a Palisade plugin in AssemblyScript. Counts tools/call requests per tool (and per
// session when per_session is true) in a fixed window through the host's kv function, and
// denies calls past the limit.
//
// config: {"limit": 10, "window_ms": 60000, "per_session": false, "tools": {"send_email": 2}}
import * as pal from "@palisade/sdk";
export { palisade_alloc } from "@palisade/sdk";

function handle(): i32 {
  const env = pal.input();
  const all = pal.whole(env);
  const method = pal.str(env, pal.get(env, all, "method"));
  if (method === null) return pal.fail("envelope has no method");
  if (method != "tools/call") return pal.emit(pal.Verdict.none());
  const phase = pal.str(env, pal.get(env, all, "phase"));
  if (phase !== null && phase == "response") return pal.emit(pal.Verdict.none());
  const tool = pal.str(env, pal.get(env, all, "tool"));
  if (tool === null) return pal.emit(pal.Verdict.none());

  const cfgStr = pal.config("config");
  const cfg = Uint8Array.wrap(String.UTF8.encode(cfgStr === null ? "{}" : cfgStr));
  const croot = pal.whole(cfg);
  let limit = pal.num(cfg, pal.get(cfg, croot, "limit"), 10);
  const tools = pal.get(cfg, croot, "tools");
  if (tools !== null) limit = pal.num(cfg, pal.get(cfg, tools, tool), limit);
  const windowMs = <i64>pal.num(cfg, pal.get(cfg, croot, "window_ms"), 60000);

  let key = "rate/" + tool;
  if (pal.isTrue(cfg, pal.get(cfg, croot, "per_session"))) {
    const session = pal.str(env, pal.get(env, all, "session"));
    key += "/" + (session === null ? "-" : session);
  }
  const resp = pal.kv("{\"op\":\"incr\",\"key\":" + pal.quote(key) + ",\"delta\":1,\"ttl_ms\":" + windowMs.toString() + "}");
  if (resp === null) return pal.fail("kv returned nothing");
  const rb = Uint8Array.wrap(String.UTF8.encode(resp));
  const err = pal.str(rb, pal.get(rb, pal.whole(rb), "error"));
  if (err !== null) return pal.fail("kv: " + err); // fail closed: the stage's failure mode decides
  const count = pal.num(rb, pal.get(rb, pal.whole(rb), "count"), 0);
  if (count > limit) {
    const v = pal.Verdict.deny("rate-limit", tool + " called " + (<i64>count).toString() + " times in " +
      windowMs.toString() + " ms (limit " + (<i64>limit).toString() + ")").withScore(1).withLabel("rate-limit");
    v.extra = "\"metadata\":{\"count\":" + (<i64>count).toString() + ",\"limit\":" + (<i64>limit).toString() + "}";
    return pal.emit(v);
  }
  return pal.emit(pal.Verdict.none());
}

function info(): i32 {
  return pal.describe("ratelimit", "0.1.0", ["request"], ["kv"]);
}

// The direct convention's exports (sdk/ABI.md): the host passes the input length.
export function evaluate(len: i32): i64 {
  return pal.run(len, handle);
}

export function describe(len: i32): i64 {
  return pal.run(len, info);
}

export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  pal.palisadeAbort(message, file, line, column);
}
