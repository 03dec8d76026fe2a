//! secrets: a Palisade plugin in Rust that keeps API keys and private keys out of tool calls.
//!
//! Request phase: a tools/call whose arguments hold a secret is denied (config
//! `"request": "redact"` forwards redacted arguments instead). Response phase: secrets in the
//! tool's result are redacted (config `"response": "deny"` blocks the result instead).
//!
//! Config: `{"request": "deny" | "redact", "response": "redact" | "deny"}` (defaults shown first).

pub mod detect;

use palisade::{json, Describe, Verdict};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Deny,
    Redact,
}

struct Config {
    request: Mode,
    response: Mode,
}

fn mode(cfg: &[u8], key: &str, def: Mode) -> Mode {
    match json::get(cfg, key).and_then(json::string).as_deref() {
        Some("deny") => Mode::Deny,
        Some("redact") => Mode::Redact,
        _ => def,
    }
}

fn config() -> Config {
    let cfg = palisade::config("config").unwrap_or_default();
    Config { request: mode(&cfg, "request", Mode::Deny), response: mode(&cfg, "response", Mode::Redact) }
}

fn found(v: Verdict, raw: &[u8], f: &[detect::Finding], path: &str) -> Verdict {
    let mut v = v.with_score(1.0).with_label("secrets");
    for x in f.iter().take(8) {
        v = v.with_evidence(x.kind, path, &detect::preview(raw, x));
    }
    v
}

/// Decides on one envelope.
pub fn evaluate(env: &[u8]) -> Result<Verdict, String> {
    let method = json::get(env, "method").ok_or("envelope has no method")?;
    if method != b"\"tools/call\"" {
        return Ok(Verdict::none());
    }
    let cfg = config();
    let phase = json::get(env, "phase").and_then(json::string).unwrap_or_default();
    if phase == "response" {
        let result = match json::get(env, "result") {
            Some(r) => r,
            None => return Ok(Verdict::none()),
        };
        let f = detect::scan(result);
        if f.is_empty() {
            return Ok(Verdict::none());
        }
        if cfg.response == Mode::Deny {
            return Ok(found(Verdict::deny("secret-in-result", "tool output contains a secret"), result, &f, "result"));
        }
        let mut v = found(Verdict::allow("redact-result", "secrets in tool output were redacted"), result, &f, "result");
        v.result = Some(String::from_utf8(detect::redact(result, &f)).map_err(|e| e.to_string())?);
        return Ok(v);
    }
    let args = match json::get(env, "arguments") {
        Some(a) => a,
        None => return Ok(Verdict::none()),
    };
    let f = detect::scan(args);
    if f.is_empty() {
        return Ok(Verdict::none());
    }
    if cfg.request == Mode::Redact {
        let mut v = found(Verdict::allow("redact-arguments", "secrets in arguments were redacted"), args, &f, "arguments");
        v.arguments = Some(String::from_utf8(detect::redact(args, &f)).map_err(|e| e.to_string())?);
        return Ok(v);
    }
    Ok(found(Verdict::deny("secret-in-arguments", "tool arguments contain a secret"), args, &f, "arguments"))
}

/// Names the plugin.
pub fn describe() -> Describe {
    Describe { name: "secrets", version: "0.1.0", phases: &["request", "response"], capabilities: &[] }
}

palisade::plugin!(evaluate, describe);

#[cfg(test)]
mod tests {
    use super::*;
    use palisade::native;

    #[test]
    fn denies_request_with_key() {
        native::set_config("config", b"{}");
        let v = evaluate(br#"{"phase":"request","method":"tools/call","arguments":{"env":"AWS=AKIAIOSFODNN7EXAMPLE"}}"#).unwrap();
        assert_eq!(v.action, "deny");
        assert_eq!(v.evidence[0].matched, "AKIA…(20 chars)");
    }

    #[test]
    fn redacts_result() {
        native::set_config("config", b"{}");
        let v = evaluate(br#"{"phase":"response","method":"tools/call","result":{"content":[{"type":"text","text":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}]}}"#).unwrap();
        assert_eq!(v.action, "allow");
        assert_eq!(v.result.as_deref(), Some(r#"{"content":[{"type":"text","text":"[REDACTED:github-token]"}]}"#));
    }

    #[test]
    fn redact_mode_for_requests() {
        native::set_config("config", br#"{"request":"redact"}"#);
        let v = evaluate(br#"{"phase":"request","method":"tools/call","arguments":{"k":"sk-proj-abcdefghijklmnopqrstuvwxyz"}}"#).unwrap();
        assert_eq!(v.action, "allow");
        assert_eq!(v.arguments.as_deref(), Some(r#"{"k":"[REDACTED:llm-api-key]"}"#));
    }

    #[test]
    fn clean_and_other_methods() {
        native::set_config("config", b"{}");
        assert_eq!(evaluate(br#"{"method":"tools/call","arguments":{"a":"hello"}}"#).unwrap().action, "none");
        assert_eq!(evaluate(br#"{"method":"tools/list"}"#).unwrap().action, "none");
        assert!(evaluate(b"{").is_err());
    }
}
