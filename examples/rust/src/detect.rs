//! Secret detection over raw JSON text, without regular expressions. Every pattern is an ASCII
//! prefix plus a run of token characters, or a PEM private-key block, so a match never contains
//! a quote or a backslash and can be replaced inside a JSON string without breaking it.

/// One secret found in a byte string.
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct Finding {
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
}

struct Prefixed {
    kind: &'static str,
    prefix: &'static [u8],
    min: usize, // token characters required after the prefix
    max: usize, // 0 = unbounded
    upper_alnum: bool, // token characters are [A-Z0-9] only
}

const PREFIXED: &[Prefixed] = &[
    Prefixed { kind: "aws-access-key", prefix: b"AKIA", min: 16, max: 16, upper_alnum: true },
    Prefixed { kind: "aws-access-key", prefix: b"ASIA", min: 16, max: 16, upper_alnum: true },
    Prefixed { kind: "github-token", prefix: b"ghp_", min: 36, max: 0, upper_alnum: false },
    Prefixed { kind: "github-token", prefix: b"gho_", min: 36, max: 0, upper_alnum: false },
    Prefixed { kind: "github-token", prefix: b"ghs_", min: 36, max: 0, upper_alnum: false },
    Prefixed { kind: "github-token", prefix: b"github_pat_", min: 22, max: 0, upper_alnum: false },
    Prefixed { kind: "slack-token", prefix: b"xoxb-", min: 10, max: 0, upper_alnum: false },
    Prefixed { kind: "slack-token", prefix: b"xoxp-", min: 10, max: 0, upper_alnum: false },
    Prefixed { kind: "stripe-key", prefix: b"sk_live_", min: 16, max: 0, upper_alnum: false },
    Prefixed { kind: "google-api-key", prefix: b"AIza", min: 35, max: 35, upper_alnum: false },
    Prefixed { kind: "llm-api-key", prefix: b"sk-", min: 20, max: 0, upper_alnum: false },
];

fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// A match may not start in the middle of a word; "\n" (a JSON escape) before it is fine.
fn left_boundary(b: &[u8], i: usize) -> bool {
    i == 0 || !token_char(b[i - 1]) || (i >= 2 && b[i - 2] == b'\\')
}

const PEM_BEGIN: &[u8] = b"-----BEGIN ";
const PEM_KEY_END: &[u8] = b"PRIVATE KEY-----";
const PEM_END: &[u8] = b"-----END ";

fn find(h: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || h.len() < needle.len() {
        return None;
    }
    (from..=h.len() - needle.len()).find(|&i| &h[i..i + needle.len()] == needle)
}

/// Returns the end of a JSON string's content starting inside it at i: the first unescaped quote.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// Scans JSON text for secrets. Findings are sorted and do not overlap.
pub fn scan(b: &[u8]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        // PEM private key: from "-----BEGIN ... PRIVATE KEY-----" to its END line, or to the
        // end of the JSON string when the END line is missing.
        if c == b'-' && b[i..].starts_with(PEM_BEGIN) {
            let line_end = (i + PEM_BEGIN.len()..b.len().min(i + 80)).find(|&j| b[j] == b'"' || b[j] == b'\\');
            let head = &b[i..line_end.unwrap_or_else(|| b.len().min(i + 80))];
            if find(head, PEM_KEY_END, 0).is_some() {
                let stop = string_end(b, i);
                let end = match find(&b[..stop], PEM_END, i + PEM_BEGIN.len()) {
                    Some(e) => match find(&b[..stop], b"-----", e + PEM_END.len()) {
                        Some(f) => f + 5,
                        None => stop,
                    },
                    None => stop,
                };
                out.push(Finding { kind: "private-key", start: i, end });
                i = end;
                continue;
            }
        }
        if left_boundary(b, i) {
            let mut matched = false;
            for p in PREFIXED {
                if c != p.prefix[0] || !b[i..].starts_with(p.prefix) {
                    continue;
                }
                let s = i + p.prefix.len();
                let mut e = s;
                while e < b.len() && token_char(b[e]) && (!p.upper_alnum || b[e].is_ascii_uppercase() || b[e].is_ascii_digit()) {
                    e += 1;
                }
                let n = e - s;
                if n >= p.min && (p.max == 0 || n == p.max) && (e == b.len() || !token_char(b[e])) {
                    out.push(Finding { kind: p.kind, start: i, end: e });
                    i = e;
                    matched = true;
                    break;
                }
            }
            if matched {
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Returns b with every finding replaced by "[REDACTED:kind]".
pub fn redact(b: &[u8], f: &[Finding]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut last = 0;
    for x in f {
        out.extend_from_slice(&b[last..x.start]);
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(x.kind.as_bytes());
        out.push(b']');
        last = x.end;
    }
    out.extend_from_slice(&b[last..]);
    out
}

/// A safe preview of a secret for evidence: its first 4 characters and its length.
pub fn preview(b: &[u8], f: &Finding) -> String {
    let s = &b[f.start..f.end];
    let head: String = s.iter().take(4).map(|&c| c as char).collect();
    format!("{}…({} chars)", head, s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<&'static str> {
        scan(s.as_bytes()).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn detects() {
        assert_eq!(kinds(r#"{"k":"AKIAIOSFODNN7EXAMPLE"}"#), vec!["aws-access-key"]);
        assert_eq!(kinds(r#"token ghp_0123456789abcdefghijABCDEFGHIJ012345 end"#), vec!["github-token"]);
        assert_eq!(kinds(r#"{"k":"sk-ant-api03-abcdefghijklmnopqrstuvwx"}"#), vec!["llm-api-key"]);
        assert_eq!(kinds(r#""a\nAKIAIOSFODNN7EXAMPLE""#), vec!["aws-access-key"]);
        assert_eq!(kinds(r#""-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----""#), vec!["private-key"]);
        assert_eq!(kinds(r#""-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn""#), vec!["private-key"]);
    }

    #[test]
    fn ignores() {
        assert!(kinds(r#"{"k":"task-force-alpha-bravo-charlie-delta"}"#).is_empty());
        assert!(kinds(r#"AKIAIOSFODNN7EXAMPL"#).is_empty()); // 15 chars
        assert!(kinds(r#"AKIAIOSFODNN7EXAMPLEX"#).is_empty()); // 17 chars
        assert!(kinds(r#"xAKIAIOSFODNN7EXAMPLE"#).is_empty());
        assert!(kinds(r#""-----BEGIN CERTIFICATE-----\nMIIB""#).is_empty());
        assert!(kinds("").is_empty());
    }

    #[test]
    fn redacts_inside_strings() {
        let s = br#"{"text":"key=AKIAIOSFODNN7EXAMPLE and -----BEGIN EC PRIVATE KEY-----\nAAA\n-----END EC PRIVATE KEY-----!"}"#;
        let f = scan(s);
        assert_eq!(f.len(), 2);
        let r = redact(s, &f);
        assert_eq!(
            std::str::from_utf8(&r).unwrap(),
            r#"{"text":"key=[REDACTED:aws-access-key] and [REDACTED:private-key]!"}"#
        );
        assert_eq!(preview(s, &f[0]), "AKIA…(20 chars)");
    }

    #[test]
    fn pem_without_end_stops_at_string_end() {
        let s = br#"{"a":"-----BEGIN PRIVATE KEY-----\nabc\"def","b":1}"#;
        let r = redact(s, &scan(s));
        assert_eq!(std::str::from_utf8(&r).unwrap(), r#"{"a":"[REDACTED:private-key]","b":1}"#);
    }
}
