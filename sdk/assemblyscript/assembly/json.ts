// Palisade AssemblyScript SDK: JSON scanning over UTF-8 bytes and verdicts, used by index.ts.
//
// JSON is scanned as UTF-8 bytes (spans into the input), never decoded whole: a 4 MiB envelope
// stays 4 MiB instead of becoming an 8 MiB UTF-16 string.

// ---- JSON scanning over bytes ------------------------------------------------------------

/** A span [start, end) of a byte buffer holding one raw JSON value (quotes included). */
export class Span {
  constructor(public start: i32, public end: i32) {}
}

/** All of b. */
export function whole(b: Uint8Array): Span {
  return new Span(0, b.length);
}

function ws(b: Uint8Array, i: i32, end: i32): i32 {
  while (i < end) {
    const c = b[i];
    if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
    i++;
  }
  return i;
}

/** Returns the index just past the JSON value at or after i, or -1 when malformed. Iterative. */
export function skip(b: Uint8Array, i: i32, end: i32): i32 {
  let depth = 0;
  i = ws(b, i, end);
  if (i >= end) return -1;
  do {
    i = ws(b, i, end);
    if (i >= end) return -1;
    const c = b[i];
    if (c == 0x22) {
      i++;
      while (true) {
        if (i >= end) return -1;
        const d = b[i];
        if (d == 0x5c) { i += 2; continue; }
        i++;
        if (d == 0x22) break;
      }
    } else if (c == 0x7b || c == 0x5b) {
      depth++; i++;
    } else if (c == 0x7d || c == 0x5d) {
      if (depth == 0) return -1;
      depth--; i++;
    } else if (c == 0x2c || c == 0x3a) {
      if (depth == 0) return -1;
      i++;
    } else {
      const s = i;
      while (i < end) {
        const d = b[i];
        if (d == 0x2c || d == 0x7d || d == 0x5d || d == 0x3a || d == 0x20 || d == 0x09 ||
            d == 0x0a || d == 0x0d || d == 0x22 || d == 0x7b || d == 0x5b) break;
        i++;
      }
      if (i == s) return -1;
    }
  } while (depth > 0);
  return i;
}

function keyIs(b: Uint8Array, s: i32, e: i32, key: Uint8Array): bool {
  if (e - s != key.length + 2) return false;
  for (let k = 0; k < key.length; k++) if (b[s + 1 + k] != key[k]) return false;
  return true;
}

/** Returns the raw value of member key of the object at obj, or null. Nested keys are not seen. */
export function get(b: Uint8Array, obj: Span, key: string): Span | null {
  const k = Uint8Array.wrap(String.UTF8.encode(key));
  const end = obj.end;
  let i = ws(b, obj.start, end);
  if (i >= end || b[i] != 0x7b) return null;
  i = ws(b, i + 1, end);
  if (i < end && b[i] == 0x7d) return null;
  while (i < end) {
    if (b[i] != 0x22) return null;
    const ke = skip(b, i, end);
    if (ke < 0) return null;
    const ks = i;
    i = ws(b, ke, end);
    if (i >= end || b[i] != 0x3a) return null;
    const vs = ws(b, i + 1, end);
    const ve = skip(b, vs, end);
    if (ve < 0) return null;
    if (keyIs(b, ks, ke, k)) return new Span(vs, ve);
    i = ws(b, ve, end);
    if (i >= end || b[i] != 0x2c) return null;
    i = ws(b, i + 1, end);
  }
  return null;
}

function hex(c: u8): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** Decodes the JSON string at sp, or null when it is not a string or is malformed. */
export function str(b: Uint8Array, sp: Span | null): string | null {
  if (sp === null) return null;
  const s = sp.start, e = sp.end;
  if (e - s < 2 || b[s] != 0x22 || b[e - 1] != 0x22) return null;
  let plain = true;
  for (let i = s + 1; i < e - 1; i++) if (b[i] == 0x5c || b[i] < 0x20) { plain = false; break; }
  if (plain) return String.UTF8.decodeUnsafe(b.dataStart + <usize>(s + 1), <usize>(e - s - 2));
  let out = "";
  let run = s + 1;
  let i = s + 1;
  while (i < e - 1) {
    const c = b[i];
    if (c < 0x20) return null;
    if (c != 0x5c) { i++; continue; }
    out += String.UTF8.decodeUnsafe(b.dataStart + <usize>run, <usize>(i - run));
    if (i + 1 >= e - 1) return null;
    const x = b[i + 1];
    i += 2;
    if (x == 0x22) out += "\"";
    else if (x == 0x5c) out += "\\";
    else if (x == 0x2f) out += "/";
    else if (x == 0x62) out += "\b";
    else if (x == 0x66) out += "\f";
    else if (x == 0x6e) out += "\n";
    else if (x == 0x72) out += "\r";
    else if (x == 0x74) out += "\t";
    else if (x == 0x75) {
      if (i + 4 > e - 1) return null;
      let cp = 0;
      for (let k = 0; k < 4; k++) {
        const h = hex(b[i + k]);
        if (h < 0) return null;
        cp = cp * 16 + h;
      }
      i += 4;
      out += String.fromCharCode(cp); // UTF-16 code unit: surrogate pairs combine naturally
    } else return null;
    run = i;
  }
  out += String.UTF8.decodeUnsafe(b.dataStart + <usize>run, <usize>(e - 1 - run));
  return out;
}

/** Parses the JSON number at sp, or returns def when sp is null or not a number. */
export function num(b: Uint8Array, sp: Span | null, def: f64): f64 {
  if (sp === null || sp.end <= sp.start) return def;
  const c = b[sp.start];
  if (!((c >= 0x30 && c <= 0x39) || c == 0x2d)) return def;
  const v = parseFloat(String.UTF8.decodeUnsafe(b.dataStart + <usize>sp.start, <usize>(sp.end - sp.start)));
  return isNaN(v) ? def : v;
}

/** Reports whether the raw value at sp is the literal true. */
export function isTrue(b: Uint8Array, sp: Span | null): bool {
  return sp !== null && sp.end - sp.start == 4 && b[sp.start] == 0x74;
}

/** Quotes s as a JSON string. */
export function quote(s: string): string {
  let out = "\"";
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    out += s.substring(run, i);
    run = i + 1;
    if (c == 0x22) out += "\\\"";
    else if (c == 0x5c) out += "\\\\";
    else if (c == 0x0a) out += "\\n";
    else out += "\\u00" + (c < 16 ? "0" : "") + c.toString(16);
  }
  return out + s.substring(run) + "\"";
}

// ---- Verdicts ------------------------------------------------------------------------------

/** What evaluate returns. */
export class Verdict {
  reason: string = "";
  rule: string = "";
  score: f64 = -1; // < 0 = omitted
  labels: string[] = [];
  /** Raw JSON members appended as-is, e.g. `"metadata":{"count":3}`. */
  extra: string = "";
  constructor(public action: string) {}

  static none(): Verdict { return new Verdict("none"); }
  static allow(rule: string, reason: string): Verdict { return new Verdict("allow").why(rule, reason); }
  static deny(rule: string, reason: string): Verdict { return new Verdict("deny").why(rule, reason); }
  static ask(rule: string, reason: string): Verdict { return new Verdict("ask").why(rule, reason); }

  why(rule: string, reason: string): Verdict { this.rule = rule; this.reason = reason; return this; }
  withScore(s: f64): Verdict { this.score = s; return this; }
  withLabel(l: string): Verdict { this.labels.push(l); return this; }

  toJSON(): string {
    let s = "{\"action\":" + quote(this.action);
    if (this.reason.length) s += ",\"reason\":" + quote(this.reason);
    if (this.rule.length) s += ",\"rule\":" + quote(this.rule);
    if (this.score >= 0) s += ",\"score\":" + (this.score == Math.floor(this.score) ? (<i64>this.score).toString() : this.score.toString());
    if (this.labels.length) {
      s += ",\"labels\":[";
      for (let i = 0; i < this.labels.length; i++) s += (i ? "," : "") + quote(this.labels[i]);
      s += "]";
    }
    if (this.extra.length) s += "," + this.extra;
    return s + "}";
  }
}
