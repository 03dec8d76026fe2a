// A no-op AssemblyScript plugin for BenchmarkCallOverhead, built with the SDK (the direct
// convention): takes its input, answers no opinion. noop_extism.ts is the same on Extism's PDK.
import * as pal from "../../../sdk/assemblyscript/assembly/index";
export { palisade_alloc } from "../../../sdk/assemblyscript/assembly/index";

function handle(): i32 {
  pal.input();
  return pal.emit(pal.Verdict.none());
}

export function evaluate(len: i32): i64 {
  return pal.run(len, handle);
}

export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  pal.palisadeAbort(message, file, line, column);
}
