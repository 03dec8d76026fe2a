//! The host interface: the direct convention's imports (wasm32, the default), the Extism kernel
//! declared by hand (wasm32 with `--cfg palisade_extism`), or an in-process fake (other targets).

pub enum HostFn {
    Kv,
    Sample,
    Infer,
}

#[cfg(all(target_arch = "wasm32", not(palisade_extism)))]
mod imp {
    //! The direct convention (ABI 1.1, sdk/ABI.md): the host writes the input into the buffer
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

#[cfg(all(target_arch = "wasm32", palisade_extism))]
mod imp {
    use super::HostFn;

    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        fn input_length() -> u64;
        fn input_load_u8(off: u64) -> u32;
        fn input_load_u64(off: u64) -> u64;
        fn output_set(off: u64, len: u64);
        fn error_set(off: u64);
        fn alloc(len: u64) -> u64;
        fn free(off: u64);
        fn length(off: u64) -> u64;
        fn load_u8(off: u64) -> u32;
        fn load_u64(off: u64) -> u64;
        fn store_u8(off: u64, v: u32);
        fn store_u64(off: u64, v: u64);
        fn config_get(key: u64) -> u64;
        fn log_info(off: u64);
    }

    #[link(wasm_import_module = "extism:host/user")]
    extern "C" {
        fn kv(req: u64) -> u64;
        fn sample(req: u64) -> u64;
        fn infer(req: u64) -> u64;
    }

    fn write_block(b: &[u8]) -> u64 {
        unsafe {
            let off = alloc(b.len() as u64);
            let mut i = 0;
            while i + 8 <= b.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[i..i + 8]);
                store_u64(off + i as u64, u64::from_le_bytes(w));
                i += 8;
            }
            while i < b.len() {
                store_u8(off + i as u64, b[i] as u32);
                i += 1;
            }
            off
        }
    }

    fn read_block(off: u64) -> Vec<u8> {
        unsafe {
            let n = length(off) as usize;
            let mut v = Vec::with_capacity(n);
            let mut i = 0;
            while i + 8 <= n {
                v.extend_from_slice(&load_u64(off + i as u64).to_le_bytes());
                i += 8;
            }
            while i < n {
                v.push(load_u8(off + i as u64) as u8);
                i += 1;
            }
            v
        }
    }

    pub fn input() -> Vec<u8> {
        unsafe {
            let n = input_length() as usize;
            let mut v = Vec::with_capacity(n);
            let mut i = 0;
            while i + 8 <= n {
                v.extend_from_slice(&input_load_u64(i as u64).to_le_bytes());
                i += 8;
            }
            while i < n {
                v.push(input_load_u8(i as u64) as u8);
                i += 1;
            }
            v
        }
    }

    pub fn output(b: &[u8]) {
        let off = write_block(b);
        unsafe { output_set(off, b.len() as u64) }
    }

    pub fn error(msg: &str) {
        let off = write_block(msg.as_bytes());
        unsafe { error_set(off) }
    }

    pub fn log(msg: &str) {
        let off = write_block(msg.as_bytes());
        unsafe {
            log_info(off);
            free(off)
        }
    }

    pub fn config(key: &str) -> Option<Vec<u8>> {
        let k = write_block(key.as_bytes());
        let v = unsafe { config_get(k) };
        unsafe { free(k) };
        if v == 0 {
            return None;
        }
        let out = read_block(v);
        unsafe { free(v) };
        Some(out)
    }

    pub fn host_call(f: HostFn, req: &[u8]) -> Option<Vec<u8>> {
        let r = write_block(req);
        let out = unsafe {
            match f {
                HostFn::Kv => kv(r),
                HostFn::Sample => sample(r),
                HostFn::Infer => infer(r),
            }
        };
        unsafe { free(r) };
        if out == 0 {
            return None;
        }
        let v = read_block(out);
        unsafe { free(out) };
        Some(v)
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

    /// The fake kernel's state, per thread.
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

pub(crate) use imp::{config, error, host_call, input, log, output};
#[cfg(not(all(target_arch = "wasm32", palisade_extism)))]
pub(crate) use imp::{begin, packed};

/// The in-process fake kernel used off wasm32, for unit tests: set the input and config, run
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

/// Empty on wasm32: the real kernel is in use.
#[cfg(target_arch = "wasm32")]
pub mod native {}
