//! A small JSON scanner and writer. The scanner borrows spans of the input (raw values, quotes
//! included) instead of building a tree, never recurses, and returns None on malformed input.

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Returns the index just past the JSON value that starts at or after `i`, or None when it is
/// malformed or truncated. Nesting depth costs no stack.
pub fn skip(b: &[u8], i: usize) -> Option<usize> {
    let mut i = ws(b, i);
    let mut depth = 0usize;
    if i >= b.len() {
        return None;
    }
    loop {
        i = ws(b, i);
        if i >= b.len() {
            return None;
        }
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    if i >= b.len() {
                        return None;
                    }
                    match b[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                if depth == 0 {
                    return None;
                }
                depth -= 1;
                i += 1;
            }
            b',' | b':' => {
                if depth == 0 {
                    return None;
                }
                i += 1;
            }
            _ => {
                let s = i;
                while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'{' | b'[') {
                    i += 1;
                }
                if i == s {
                    return None;
                }
            }
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

/// Iterates over an object's members (key = raw quoted key) or an array's elements (key = None).
pub struct Members<'a> {
    b: &'a [u8],
    i: usize,
    obj: bool,
    started: bool,
    /// Set when iteration stopped at malformed input.
    pub bad: bool,
}

/// Starts iterating over the object or array `v`.
pub fn members(v: &[u8]) -> Members<'_> {
    let i = ws(v, 0);
    let ok = i < v.len() && (v[i] == b'{' || v[i] == b'[');
    Members { b: v, i: i + 1, obj: ok && v[i] == b'{', started: false, bad: !ok }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Option<&'a [u8]>, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.bad {
            return None;
        }
        let b = self.b;
        let mut i = ws(b, self.i);
        if i >= b.len() {
            self.bad = true;
            return None;
        }
        if b[i] == if self.obj { b'}' } else { b']' } {
            return None;
        }
        if self.started {
            if b[i] != b',' {
                self.bad = true;
                return None;
            }
            i = ws(b, i + 1);
        }
        self.started = true;
        let mut key = None;
        if self.obj {
            if i >= b.len() || b[i] != b'"' {
                self.bad = true;
                return None;
            }
            let e = match skip(b, i) {
                Some(e) => e,
                None => {
                    self.bad = true;
                    return None;
                }
            };
            key = Some(&b[i..e]);
            i = ws(b, e);
            if i >= b.len() || b[i] != b':' {
                self.bad = true;
                return None;
            }
            i += 1;
        }
        let s = ws(b, i);
        match skip(b, s) {
            Some(e) => {
                self.i = e;
                Some((key, &b[s..e]))
            }
            None => {
                self.bad = true;
                None
            }
        }
    }
}

/// Returns the raw value of member `key` of the object `obj` (first match), or None.
pub fn get<'a>(obj: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let mut m = members(obj);
    if !m.obj {
        return None;
    }
    let k = key.as_bytes();
    m.find(|(rk, _)| matches!(rk, Some(rk) if rk.len() == k.len() + 2 && &rk[1..rk.len() - 1] == k))
        .map(|(_, v)| v)
}

fn hex4(b: &[u8]) -> Option<u32> {
    if b.len() < 4 {
        return None;
    }
    let mut v = 0u32;
    for &c in &b[..4] {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// Decodes the raw JSON string value `v` (quotes included). None when it is not a string or is
/// malformed (bad escapes, lone surrogates, control characters, invalid UTF-8).
pub fn string(v: &[u8]) -> Option<String> {
    if v.len() < 2 || v[0] != b'"' || v[v.len() - 1] != b'"' {
        return None;
    }
    let s = &v[1..v.len() - 1];
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c < 0x20 {
            return None;
        }
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *s.get(i + 1)?;
        i += 2;
        let ch = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let mut cp = hex4(&s[i..])?;
                i += 4;
                if (0xD800..0xDC00).contains(&cp) {
                    if s.get(i) != Some(&b'\\') || s.get(i + 1) != Some(&b'u') {
                        return None;
                    }
                    let lo = hex4(&s[i + 2..])?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
                char::from_u32(cp)?
            }
            _ => return None,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    String::from_utf8(out).ok()
}

/// Appends s to out as a quoted JSON string.
pub fn escape(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Encodes a list of strings as a JSON array.
pub fn string_array(v: &[String]) -> String {
    let mut s = String::from("[");
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        escape(x, &mut s);
    }
    s.push(']');
    s
}

/// Writes a JSON object member by member.
pub struct Writer {
    buf: String,
    n: usize,
}

impl Writer {
    pub fn object() -> Writer {
        Writer { buf: String::from("{"), n: 0 }
    }
    fn key(&mut self, k: &str) {
        if self.n > 0 {
            self.buf.push(',');
        }
        self.n += 1;
        escape(k, &mut self.buf);
        self.buf.push(':');
    }
    /// A string member.
    pub fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        escape(v, &mut self.buf);
    }
    /// A number member (NaN and infinities are written as 0).
    pub fn num(&mut self, k: &str, v: f64) {
        self.key(k);
        if v.is_finite() {
            self.buf.push_str(&format!("{}", v));
        } else {
            self.buf.push('0');
        }
    }
    /// A member whose value is already-encoded JSON.
    pub fn raw(&mut self, k: &str, v: &str) {
        self.key(k);
        self.buf.push_str(v);
    }
    pub fn finish(mut self) -> String {
        self.buf.push('}');
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_top_level_only() {
        let env = br#" {"arguments": {"tool": "inner"}, "tool" : "outer", "n": [1, {"a": "}"}]} "#;
        assert_eq!(get(env, "tool"), Some(&br#""outer""#[..]));
        assert_eq!(get(env, "n"), Some(&br#"[1, {"a": "}"}]"#[..]));
        assert_eq!(get(env, "missing"), None);
        assert_eq!(get(br#"[1,2]"#, "tool"), None);
    }

    #[test]
    fn malformed() {
        // skip checks balance and strings, not grammar; members checks the grammar.
        for b in [&b""[..], b"{", b"{\"a\":", b"]", b"\"abc", b"[\"a]"] {
            assert!(skip(b, 0).is_none(), "{:?}", std::str::from_utf8(b));
            assert!(get(b, "a").is_none());
        }
        assert_eq!(get(b"{\"a\" 1}", "a"), None);
        assert_eq!(get(b"{\"b\":1,,\"a\":2}", "a"), None);
        let deep = "[".repeat(100000);
        assert_eq!(skip(deep.as_bytes(), 0), None);
        let deep = "[".repeat(100000) + &"]".repeat(100000);
        assert_eq!(skip(deep.as_bytes(), 0), Some(200000));
    }

    #[test]
    fn strings() {
        assert_eq!(string(br#""a\"b\\c\/\n\u00e9\ud83d\ude00""#).as_deref(), Some("a\"b\\c/\né😀"));
        assert_eq!(string(br#""\ud83d""#), None);
        assert_eq!(string(br#""\x""#), None);
        assert_eq!(string(b"\"\xff\""), None);
        assert_eq!(string(b"12"), None);
        let mut s = String::new();
        escape("q\"\\\n\u{1}", &mut s);
        assert_eq!(s, r#""q\"\\\n\u0001""#);
    }

    #[test]
    fn members_iter() {
        let v: Vec<_> = members(br#"{"a":1,"b":[2,3]}"#).map(|(k, v)| (k.unwrap().to_vec(), v.to_vec())).collect();
        assert_eq!(v, vec![(b"\"a\"".to_vec(), b"1".to_vec()), (b"\"b\"".to_vec(), b"[2,3]".to_vec())]);
        let a: Vec<_> = members(b"[1, \"x\" ,{}]").map(|(_, v)| v.to_vec()).collect();
        assert_eq!(a, vec![b"1".to_vec(), b"\"x\"".to_vec(), b"{}".to_vec()]);
        let mut m = members(b"[1 2]");
        assert!(m.next().is_some() && m.next().is_none() && m.bad);
    }
}
