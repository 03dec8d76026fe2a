// Palisade plugin SDK for AssemblyScript, Extism convention (ABI 1.0, see sdk/ABI.md), over
// @extism/as-pdk. Import "@palisade/sdk/assembly/extism" instead of "@palisade/sdk" for a plugin
// an Extism host (or a Palisade host older than ABI 1.1) can run; the plugin then exports
// `evaluate(): i32` and `describe(): i32` itself (see the README).

import { Host, Config, Memory } from "@extism/as-pdk";
import { error_set, length, log_debug, log_info, log_warn, log_error } from "@extism/as-pdk/lib/env";

export { Host, Config, Memory };

/** The ABI version this SDK implements. */
export const ABI = "1.0";

@external("extism:host/user", "kv")
declare function host_kv(req: u64): u64;
@external("extism:host/user", "sample")
declare function host_sample(req: u64): u64;
@external("extism:host/user", "infer")
declare function host_infer(req: u64): u64;

/** Returns the input: the envelope JSON for evaluate. */
export function input(): Uint8Array {
  return Host.input();
}

/** Sets the output to s, UTF-8 encoded (Host.outputString in as-pdk 1.0.0 miscounts non-ASCII). */
export function output(s: string): void {
  Host.output(Uint8Array.wrap(String.UTF8.encode(s)));
}

/** Records msg as the plugin error and returns 1, the value the export should return. */
export function fail(msg: string): i32 {
  const m = Memory.allocateString(msg);
  error_set(m.offset);
  return 1;
}

/** Returns the Extism config value for key; "config" holds the stage config JSON. */
export function config(key: string): string | null {
  return Config.get(key);
}

/** Writes msg to the host's debug log; level 0 debug, 1 info, 2 warn, 3 error. */
export function log(level: i32, msg: string): void {
  const m = Memory.allocateString(msg);
  if (level <= 0) log_debug(m.offset);
  else if (level == 1) log_info(m.offset);
  else if (level == 2) log_warn(m.offset);
  else log_error(m.offset);
  m.free();
}

function call(fnIndex: i32, req: string): string | null {
  const m = Memory.allocateString(req);
  let off: u64 = 0;
  if (fnIndex == 0) off = host_kv(m.offset);
  else if (fnIndex == 1) off = host_sample(m.offset);
  else off = host_infer(m.offset);
  m.free();
  if (off == 0) return null;
  const r = new Memory(off, length(off));
  const s = r.toString();
  r.free();
  return s;
}

/** Calls the host's kv function (capability "kv"); returns its response JSON. */
export function kv(req: string): string | null {
  return call(0, req);
}

/** Calls the host's sample function (capability "sample"); returns its response JSON. */
export function sample(req: string): string | null {
  return call(1, req);
}

/** Calls the host's infer function (capability "infer"); returns its response JSON. */
export function infer(req: string): string | null {
  return call(2, req);
}

export * from "./json";
import { Verdict, quote } from "./json";

/** Writes v as the output and returns 0, the value evaluate should return. */
export function emit(v: Verdict): i32 {
  output(v.toJSON());
  return 0;
}

/** Writes the describe output and returns 0. */
export function describe(name: string, version: string, phases: string[], capabilities: string[]): i32 {
  let s = "{\"name\":" + quote(name) + ",\"version\":" + quote(version) + ",\"abi\":\"" + ABI + "\",\"phases\":[";
  for (let i = 0; i < phases.length; i++) s += (i ? "," : "") + quote(phases[i]);
  s += "],\"capabilities\":[";
  for (let i = 0; i < capabilities.length; i++) s += (i ? "," : "") + quote(capabilities[i]);
  output(s + "]}");
  return 0;
}

/** An abort handler that reports through the Extism error instead of importing env.abort.
 * Use it from the plugin's entry file: `--use abort=assembly/index/abort` with
 * `export function abort(...) { palisadeAbort(...) }` there. */
export function palisadeAbort(message: string | null, file: string | null, line: u32, column: u32): void {
  fail("abort: " + (message ? message : "") + " at " + (file ? file : "") + ":" + line.toString() + ":" + column.toString());
  unreachable();
}
