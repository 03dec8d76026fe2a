//! The host interface: the direct convention's imports (wasm32), or an in-process fake (other
//! targets).

pub enum HostFn {
    Kv,
    Sample,
    Infer,
}

#[cfg(target_arch = "wasm32")]
mod imp {
    //! The direct convention (sdk/ABI.md): the host writes the input into the buffer
    //! palisade_alloc returns and reads the output the packed result of evaluate points at.
    use super::HostFn;

    #[link(wasm_import_module = "palisade")]
    extern "C" {
        fn config_get(key: *const u8, n: i32) -> i32;
        fn result_read(dst: *mut u8);
        #[link_name = "log"]
        fn host_log(level: i32, msg: *const u8, n: i32);
        fn kv(req: *const u8, n: i32) -> i32;
        fn sample(req: *const u8, n: i32) -> i32;
        fn infer(req: *const u8, n: i32) -> i32;
    }

    static mut INPUT: Vec<u8> = Vec::new();
    static mut OUTPUT: Vec<u8> = Vec::new();
    static mut FAILED: bool = false;

    #[export_name = "palisade_alloc"]
    pub extern "C" fn palisade_alloc(n: i32) -> i32 {
        unsafe {
            INPUT.clear();
            INPUT.resize(n as usize, 0);
            INPUT.as_mut_ptr() as i32
        }
    }

    fn result(n: i32) -> Vec<u8> {
        let mut v = vec![0u8; n.max(0) as usize];
        if n > 0 {
            unsafe { result_read(v.as_mut_ptr()) }
        }
        v
    }

    pub fn begin(n: i32) {
        unsafe {
            INPUT.truncate(n as usize);
            OUTPUT.clear();
            FAILED = false;
        }
    }

    pub fn packed() -> i64 {
        unsafe {
            let mut p = (OUTPUT.as_ptr() as usize as i64) << 32 | OUTPUT.len() as i64;
            if FAILED {
                p |= 1 << 31;
            }
            p
        }
    }

    pub fn input() -> Vec<u8> {
        unsafe { INPUT.clone() }
    }

    pub fn output(b: &[u8]) {
        unsafe {
            OUTPUT = b.to_vec();
            FAILED = false;
        }
    }

    pub fn error(msg: &str) {
        unsafe {
            OUTPUT = msg.as_bytes().to_vec();
            FAILED = true;
        }
    }

    pub fn log(msg: &str) {
        unsafe { host_log(1, msg.as_ptr(), msg.len() as i32) }
    }

    pub fn config(key: &str) -> Option<Vec<u8>> {
        let n = unsafe { config_get(key.as_ptr(), key.len() as i32) };
        if n < 0 {
            return None;
        }
        Some(result(n))
    }

    pub fn host_call(f: HostFn, req: &[u8]) -> Option<Vec<u8>> {
        let (p, n) = (req.as_ptr(), req.len() as i32);
        let m = unsafe {
            match f {
                HostFn::Kv => kv(p, n),
                HostFn::Sample => sample(p, n),
                HostFn::Infer => infer(p, n),
            }
        };
        Some(result(m))
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::HostFn;
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        pub static STATE: RefCell<Fake> = RefCell::new(Fake::default());
    }

    /// The fake host's state, per thread.
    #[derive(Default)]
    pub struct Fake {
        pub input: Vec<u8>,
        pub output: Vec<u8>,
        pub error: String,
        pub config: HashMap<String, Vec<u8>>,
        pub host: Option<fn(&str, &[u8]) -> Option<Vec<u8>>>,
    }

    pub fn input() -> Vec<u8> {
        STATE.with(|s| s.borrow().input.clone())
    }
    pub fn output(b: &[u8]) {
        STATE.with(|s| s.borrow_mut().output = b.to_vec())
    }
    pub fn error(msg: &str) {
        STATE.with(|s| s.borrow_mut().error = msg.to_string())
    }
    pub fn log(_msg: &str) {}
    pub fn begin(_n: i32) {}
    pub fn packed() -> i64 {
        0
    }
    pub fn config(key: &str) -> Option<Vec<u8>> {
        STATE.with(|s| s.borrow().config.get(key).cloned())
    }
    pub fn host_call(f: HostFn, req: &[u8]) -> Option<Vec<u8>> {
        let name = match f {
            HostFn::Kv => "kv",
            HostFn::Sample => "sample",
            HostFn::Infer => "infer",
        };
        let h = STATE.with(|s| s.borrow().host);
        match h {
            Some(h) => h(name, req),
            None => Some(format!(r#"{{"error":"capability not granted: {}"}}"#, name).into_bytes()),
        }
    }
}

pub(crate) use imp::{begin, config, error, host_call, input, log, output, packed};

/// The in-process fake host used off wasm32, for unit tests: set the input and config, run
/// the plugin's evaluate, read the output.
#[cfg(not(target_arch = "wasm32"))]
pub mod native {
    use super::imp::STATE;

    pub fn set_input(b: &[u8]) {
        STATE.with(|s| s.borrow_mut().input = b.to_vec())
    }
    pub fn set_config(key: &str, v: &[u8]) {
        STATE.with(|s| {
            s.borrow_mut().config.insert(key.to_string(), v.to_vec());
        })
    }
    /// Answers host function calls (name, request) -> response.
    pub fn set_host(f: fn(&str, &[u8]) -> Option<Vec<u8>>) {
        STATE.with(|s| s.borrow_mut().host = Some(f))
    }
    pub fn take_output() -> Vec<u8> {
        STATE.with(|s| std::mem::take(&mut s.borrow_mut().output))
    }
    pub fn take_error() -> String {
        STATE.with(|s| std::mem::take(&mut s.borrow_mut().error))
    }
}

/// Empty on wasm32: the real host is in use.
#[cfg(target_arch = "wasm32")]
pub mod native {}
