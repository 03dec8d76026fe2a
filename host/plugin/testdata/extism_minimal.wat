;; An Extism plugin written by hand (sdk/ABI.md "Extism compatibility"): the Extism kernel
;; imports declared in WAT, no opinion on anything, an error on empty input. It is the
;; compatibility path's known-good plugin in host/plugin and host/conformance tests.
;; Build: wat2wasm extism_minimal.wat -o extism_minimal.wasm
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22action\22:\22none\22}")  ;; 17 bytes at 0
  (data (i32.const 32) "empty input")               ;; 11 bytes at 32

  ;; $block copies n bytes at ptr into a new Extism block and returns its offset.
  (func $block (param $ptr i32) (param $n i32) (result i64)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
                      (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $off))

  (func (export "evaluate") (result i32)
    (if (i64.eqz (call $input_length))
      (then (call $error_set (call $block (i32.const 32) (i32.const 11)))
            (return (i32.const 1))))
    (call $output_set (call $block (i32.const 0) (i32.const 17)) (i64.const 17))
    (i32.const 0))
)
