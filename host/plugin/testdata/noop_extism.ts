// A no-op AssemblyScript plugin built on Extism's PDK (@extism/as-pdk 1.0.0), not on a Palisade
// SDK: the compatibility path (sdk/ABI.md "Extism compatibility"). It takes its input and
// answers no opinion; noop_direct.ts is the same with the SDK, on the direct convention.
import { Host, Memory } from "@extism/as-pdk";
import { error_set } from "@extism/as-pdk/lib/env";

export function evaluate(): i32 {
  Host.input();
  Host.outputString("{\"action\":\"none\"}");
  return 0;
}

export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  error_set(Memory.allocateString("abort: " + (message ? message : "")).offset);
  unreachable();
}
