// Palisade plugin SDK for AssemblyScript, on the direct calling convention (sdk/ABI.md): the
// host writes the envelope into this module's memory through palisade_alloc and reads the
// verdict once; host functions come from the "palisade" import module. No Extism kernel.
//
// A plugin's entry file:
//
//   import * as pal from "@palisade/sdk";
//   export { palisade_alloc } from "@palisade/sdk";
//   function handle(): i32 { ... return pal.emit(pal.Verdict.none()); }
//   function info(): i32 { return pal.describe("name", "0.1.0", ["request"], []); }
//   export function evaluate(len: i32): i64 { return pal.run(len, handle); }
//   export function describe(len: i32): i64 { return pal.run(len, info); }
//   export function abort(m: string | null, f: string | null, l: u32, c: u32): void { pal.palisadeAbort(m, f, l, c); }
//
// built with `asc assembly/index.ts --optimize --use abort=assembly/index/abort`.

export * from "./json";
import { Verdict, quote } from "./json";

/** The envelope schema version this SDK reads and writes, stated as "abi" in describe (ABI.md "Versions"). */
export const ABI = "1.1";

@external("palisade", "config_get")
declare function host_config_get(key: usize, keyLen: i32): i32;
@external("palisade", "result_read")
declare function host_result_read(dst: usize): void;
@external("palisade", "log")
declare function host_log(level: i32, msg: usize, msgLen: i32): void;
@external("palisade", "kv")
declare function host_kv(req: usize, reqLen: i32): i32;
@external("palisade", "sample")
declare function host_sample(req: usize, reqLen: i32): i32;
@external("palisade", "infer")
declare function host_infer(req: usize, reqLen: i32): i32;

// The input buffer palisade_alloc hands out, reused (grown when too small); the globals keep
// it and the last output reachable for the GC until the host has read them.
let inBuf: ArrayBuffer = new ArrayBuffer(0);
let inLen: i32 = 0;
let outBuf: ArrayBuffer = new ArrayBuffer(0);
let failed: bool = false;

/** The direct convention's allocator: export it from the plugin's entry file. */
export function palisade_alloc(len: i32): usize {
  if (len > inBuf.byteLength) inBuf = new ArrayBuffer(len);
  inLen = len;
  return changetype<usize>(inBuf);
}

/** Runs fn for one evaluate or describe call with len input bytes and returns the packed
 * (ptr << 32) | len result: the output fn set, or the message it failed with (bit 31). */
export function run(len: i32, fn: () => i32): i64 {
  inLen = len;
  outBuf = new ArrayBuffer(0);
  failed = false;
  const rc = fn();
  if (rc != 0 && !failed) setOut("evaluate returned " + rc.toString(), true);
  let n = <u64>outBuf.byteLength;
  if (failed) n |= 0x80000000;
  return <i64>((<u64>changetype<usize>(outBuf) << 32) | n);
}

function setOut(s: string, isError: bool): void {
  outBuf = String.UTF8.encode(s);
  failed = isError;
}

/** Returns the input: the envelope JSON for evaluate. */
export function input(): Uint8Array {
  return Uint8Array.wrap(inBuf, 0, inLen);
}

/** Sets the output to s, UTF-8 encoded. */
export function output(s: string): void {
  setOut(s, false);
}

/** Records msg as the plugin error and returns 1, the value the handler should return. */
export function fail(msg: string): i32 {
  setOut(msg, true);
  return 1;
}

function pending(n: i32): string | null {
  if (n < 0) return null;
  if (n == 0) return "";
  const b = new ArrayBuffer(n);
  host_result_read(changetype<usize>(b));
  return String.UTF8.decode(b);
}

/** Returns the config value for key; "config" holds the stage config JSON. */
export function config(key: string): string | null {
  const k = String.UTF8.encode(key);
  return pending(host_config_get(changetype<usize>(k), k.byteLength));
}

/** Writes msg to the host's debug log; level 0 debug, 1 info, 2 warn, 3 error. */
export function log(level: i32, msg: string): void {
  const m = String.UTF8.encode(msg);
  host_log(level, changetype<usize>(m), m.byteLength);
}

function call(fnIndex: i32, req: string): string | null {
  const r = String.UTF8.encode(req);
  const p = changetype<usize>(r), n = r.byteLength;
  let got: i32;
  if (fnIndex == 0) got = host_kv(p, n);
  else if (fnIndex == 1) got = host_sample(p, n);
  else got = host_infer(p, n);
  return pending(got);
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

/** Writes v as the output and returns 0, the value the handler should return. */
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

/** An abort handler that logs the message at error level and traps, instead of importing
 * env.abort. Use it from the plugin's entry file: `--use abort=assembly/index/abort` with
 * `export function abort(...) { palisadeAbort(...) }` there. */
export function palisadeAbort(message: string | null, file: string | null, line: u32, column: u32): void {
  log(3, "abort: " + (message ? message : "") + " at " + (file ? file : "") + ":" + line.toString() + ":" + column.toString());
  unreachable();
}
