//! Palisade plugin SDK for Rust (ABI v1, see sdk/ABI.md).
//!
//! Dependency-free: the direct calling convention's imports (module `palisade`: `config_get`,
//! `result_read`, `log` and the host functions `sample`, `infer`, `kv`) are declared by hand, and
//! JSON is handled by a small scanner ([`json`]) that borrows from the input instead of building a tree.
//!
//! ```ignore
//! use palisade::{json, Verdict};
//! fn evaluate(env: &[u8]) -> Result<Verdict, String> {
//!     let tool = json::get(env, "tool").and_then(json::string).unwrap_or_default();
//!     if tool == "delete_repo" { return Ok(Verdict::deny("no-delete", "deleting repos is off")); }
//!     Ok(Verdict::none())
//! }
//! palisade::plugin!(evaluate);
//! ```
//!
//! Builds with Debian's rustc 1.63 for `wasm32-unknown-unknown`; on other targets the host is
//! replaced by an in-process fake ([`native`]) so plugin logic runs under `rustc --test`.

pub mod json;

#[doc(hidden)]
pub mod kernel;
pub use kernel::native;

/// The envelope schema version this SDK reads and writes, stated as `abi` in describe
/// (sdk/ABI.md "Versions").
pub const ABI: &str = "1.1";

/// Returns the input (the envelope JSON for `evaluate`).
pub fn input() -> Vec<u8> {
    kernel::input()
}

/// Sets the output bytes (a verdict or describe JSON).
pub fn output(b: &[u8]) {
    kernel::output(b)
}

/// Records msg as the plugin error; the export should then return non-zero.
pub fn set_error(msg: &str) {
    kernel::error(msg)
}

/// Returns the Extism config value for key. Key `config` holds the stage config as JSON.
pub fn config(key: &str) -> Option<Vec<u8>> {
    kernel::config(key)
}

/// Writes msg to the host log at info level.
pub fn log(msg: &str) {
    kernel::log(msg)
}

/// Calls the host's `kv` function (capability `kv`) with a request JSON; returns the response
/// JSON (`{"error":...}` when refused), or None when the host returned nothing.
pub fn kv(request: &str) -> Option<Vec<u8>> {
    kernel::host_call(kernel::HostFn::Kv, request.as_bytes())
}

/// Calls the host's `sample` function (capability `sample`); see [`kv`].
pub fn sample(request: &str) -> Option<Vec<u8>> {
    kernel::host_call(kernel::HostFn::Sample, request.as_bytes())
}

/// Calls the host's `infer` function (capability `infer`); see [`kv`].
pub fn infer(request: &str) -> Option<Vec<u8>> {
    kernel::host_call(kernel::HostFn::Infer, request.as_bytes())
}

/// One piece of matched input supporting a verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    pub label: String,
    pub path: String,
    pub matched: String,
}

/// What `evaluate` returns. Build one with [`Verdict::allow`], [`Verdict::deny`]... and the
/// `with_*` methods; [`Verdict::to_json`] encodes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub action: &'static str,
    pub reason: String,
    pub rule: String,
    pub score: Option<f64>,
    pub labels: Vec<String>,
    pub evidence: Vec<Evidence>,
    pub guidance: String,
    pub final_: bool,
    /// Raw JSON object replacing the request's arguments (request phase).
    pub arguments: Option<String>,
    /// Raw JSON replacing the upstream's result (response phase).
    pub result: Option<String>,
}

impl Verdict {
    fn new(action: &'static str, rule: &str, reason: &str) -> Verdict {
        Verdict { action, rule: rule.into(), reason: reason.into(), ..Verdict::default() }
    }
    /// No opinion.
    pub fn none() -> Verdict {
        Verdict::new("none", "", "")
    }
    pub fn allow(rule: &str, reason: &str) -> Verdict {
        Verdict::new("allow", rule, reason)
    }
    pub fn deny(rule: &str, reason: &str) -> Verdict {
        Verdict::new("deny", rule, reason)
    }
    pub fn ask(rule: &str, reason: &str) -> Verdict {
        Verdict::new("ask", rule, reason)
    }
    /// Hand the call to the LLM judge with guidance.
    pub fn sample(rule: &str, guidance: &str) -> Verdict {
        let mut v = Verdict::new("sample", rule, "");
        v.guidance = guidance.into();
        v
    }
    pub fn with_score(mut self, s: f64) -> Verdict {
        self.score = Some(s);
        self
    }
    pub fn with_label(mut self, l: &str) -> Verdict {
        self.labels.push(l.into());
        self
    }
    pub fn with_evidence(mut self, label: &str, path: &str, matched: &str) -> Verdict {
        self.evidence.push(Evidence { label: label.into(), path: path.into(), matched: matched.into() });
        self
    }

    /// Encodes the verdict as JSON (fields with zero values omitted).
    pub fn to_json(&self) -> String {
        let mut o = json::Writer::object();
        o.str("action", self.action);
        if !self.reason.is_empty() {
            o.str("reason", &self.reason);
        }
        if !self.rule.is_empty() {
            o.str("rule", &self.rule);
        }
        if let Some(s) = self.score {
            o.num("score", s);
        }
        if !self.labels.is_empty() {
            o.raw("labels", &json::string_array(&self.labels));
        }
        if !self.evidence.is_empty() {
            let mut a = String::from("[");
            for (i, e) in self.evidence.iter().enumerate() {
                if i > 0 {
                    a.push(',');
                }
                let mut eo = json::Writer::object();
                eo.str("label", &e.label);
                eo.str("path", &e.path);
                eo.str("match", &e.matched);
                a.push_str(&eo.finish());
            }
            a.push(']');
            o.raw("evidence", &a);
        }
        if self.final_ {
            o.raw("final", "true");
        }
        if !self.guidance.is_empty() {
            o.str("guidance", &self.guidance);
        }
        if let Some(a) = &self.arguments {
            o.raw("arguments", a);
        }
        if let Some(r) = &self.result {
            o.raw("result", r);
        }
        o.finish()
    }
}

/// What `describe` returns.
#[derive(Clone, Debug, Default)]
pub struct Describe {
    pub name: &'static str,
    pub version: &'static str,
    pub phases: &'static [&'static str],
    pub capabilities: &'static [&'static str],
}

impl Describe {
    pub fn to_json(&self) -> String {
        let mut o = json::Writer::object();
        o.str("name", self.name);
        if !self.version.is_empty() {
            o.str("version", self.version);
        }
        o.str("abi", ABI);
        let v: Vec<String> = self.phases.iter().map(|s| s.to_string()).collect();
        o.raw("phases", &json::string_array(&v));
        let v: Vec<String> = self.capabilities.iter().map(|s| s.to_string()).collect();
        o.raw("capabilities", &json::string_array(&v));
        o.finish()
    }
}

/// Runs an evaluate function the way the export must: input in, verdict JSON out, 0 on
/// success, 1 with the plugin error set on Err. The [`plugin!`] macro calls it.
pub fn run_evaluate(f: fn(&[u8]) -> Result<Verdict, String>) -> i32 {
    let env = input();
    match f(&env) {
        Ok(v) => {
            output(v.to_json().as_bytes());
            0
        }
        Err(e) => {
            set_error(&e);
            1
        }
    }
}

/// Declares the `evaluate` export (and `describe` when given) for a plugin crate:
///
/// ```ignore
/// palisade::plugin!(evaluate, describe);
/// ```
/// where `evaluate: fn(&[u8]) -> Result<Verdict, String>` and `describe: fn() -> Describe`.
/// The exports follow the direct calling convention (sdk/ABI.md): `palisade_alloc` comes from
/// the SDK, `evaluate(len)` and `describe(len)` from this macro.
#[macro_export]
macro_rules! plugin {
    ($evaluate:path) => {
        #[export_name = "evaluate"]
        pub extern "C" fn __palisade_evaluate(n: i32) -> i64 {
            $crate::run_direct(n, || $crate::run_evaluate($evaluate))
        }
    };
    ($evaluate:path, $describe:path) => {
        $crate::plugin!($evaluate);
        #[export_name = "describe"]
        pub extern "C" fn __palisade_describe(n: i32) -> i64 {
            $crate::run_direct(n, || {
                $crate::output($describe().to_json().as_bytes());
                0
            })
        }
    };
}

/// Runs an export body on the direct convention: the input is the n bytes the host wrote, the
/// result packs the output (or the error message, when f returned non-zero). [`plugin!`] calls it.
pub fn run_direct(n: i32, f: impl FnOnce() -> i32) -> i64 {
    kernel::begin(n);
    if f() != 0 {
        let p = kernel::packed();
        if p & (1 << 31) == 0 {
            kernel::error("plugin error");
        }
    }
    kernel::packed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_json() {
        let v = Verdict::deny("r", "a \"quoted\"\nreason").with_score(1.0).with_label("x").with_evidence("x", "arguments.k", "AKIA…");
        assert_eq!(
            v.to_json(),
            r#"{"action":"deny","reason":"a \"quoted\"\nreason","rule":"r","score":1,"labels":["x"],"evidence":[{"label":"x","path":"arguments.k","match":"AKIA…"}]}"#
        );
        assert_eq!(Verdict::none().to_json(), r#"{"action":"none"}"#);
    }

    #[test]
    fn describe_json() {
        let d = Describe { name: "n", version: "1", phases: &["request"], capabilities: &[] };
        assert_eq!(d.to_json(), r#"{"name":"n","version":"1","abi":"1.1","phases":["request"],"capabilities":[]}"#);
    }

    #[test]
    fn run_evaluate_native() {
        native::set_input(br#"{"tool":"x"}"#);
        fn ev(env: &[u8]) -> Result<Verdict, String> {
            let t = json::get(env, "tool").and_then(json::string).unwrap_or_default();
            Ok(Verdict::allow("t", &t))
        }
        assert_eq!(run_evaluate(ev), 0);
        assert_eq!(native::take_output(), br#"{"action":"allow","reason":"x","rule":"t"}"#.to_vec());
        fn bad(_: &[u8]) -> Result<Verdict, String> {
            Err("boom".into())
        }
        assert_eq!(run_evaluate(bad), 1);
        assert_eq!(native::take_error(), "boom");
    }
}
