// An AssemblyScript plugin on the direct convention that misbehaves on purpose when the
// envelope's tool is the config's "when_tool": mode "trap" aborts (an AssemblyScript abort:
// the SDK logs it and traps), "loop" never returns, "grow" allocates until memory runs out,
// "error" fails with a message. Any other tool gets no opinion. For as_test.go.
import * as pal from "../../../sdk/assemblyscript/assembly/index";
export { palisade_alloc } from "../../../sdk/assemblyscript/assembly/index";

let sink: ArrayBuffer[] = [];

function handle(): i32 {
  const env = pal.input();
  const tool = pal.str(env, pal.get(env, pal.whole(env), "tool"));
  const s = pal.config("config");
  const cfg = Uint8Array.wrap(String.UTF8.encode(s === null ? "{}" : s));
  const when = pal.str(cfg, pal.get(cfg, pal.whole(cfg), "when_tool"));
  const mode = pal.str(cfg, pal.get(cfg, pal.whole(cfg), "mode"));
  if (tool === null || when === null || mode === null || tool != when) return pal.emit(pal.Verdict.none());
  if (mode == "trap") throw new Error("misbehave: trap");
  if (mode == "loop") {
    let n: u64 = 0;
    while (n != u64.MAX_VALUE) n = n * 3 + 1;
    return <i32>n;
  }
  if (mode == "grow") {
    while (true) sink.push(new ArrayBuffer(1 << 20));
  }
  if (mode == "error") return pal.fail("misbehave: error");
  return pal.emit(pal.Verdict.none());
}

export function evaluate(len: i32): i64 {
  return pal.run(len, handle);
}

export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  pal.palisadeAbort(message, file, line, column);
}
