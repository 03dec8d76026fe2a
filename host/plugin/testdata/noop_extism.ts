// A no-op AssemblyScript plugin for BenchmarkCallOverhead on the Extism convention (ABI 1.0):
// takes its input, answers no opinion. noop_direct.ts is the same on the direct convention.
import * as pal from "../../../sdk/assemblyscript/assembly/extism";

export function evaluate(): i32 {
  pal.input();
  return pal.emit(pal.Verdict.none());
}

export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  pal.palisadeAbort(message, file, line, column);
}
