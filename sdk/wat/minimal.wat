;; The smallest useful Palisade plugin (the direct convention, ../ABI.md): no opinion on
;; anything, an error on empty input. No imports at all. Build: wat2wasm minimal.wat -o minimal.wasm
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22action\22:\22none\22}")  ;; 17 bytes at 0
  (data (i32.const 32) "empty input")               ;; 11 bytes at 32

  ;; The host writes each call's input at 1024; grow memory to fit it.
  (func (export "palisade_alloc") (param $len i32) (result i32)
    (local $need i32)
    (local.set $need (i32.sub
      (i32.shr_u (i32.add (i32.add (i32.const 1024) (local.get $len)) (i32.const 65535)) (i32.const 16))
      (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $need)) (i32.const -1)) (then unreachable))))
    (i32.const 1024))

  ;; evaluate(len) returns (ptr << 32) | len of its output; bit 31 of len marks an error message.
  (func (export "evaluate") (param $len i32) (result i64)
    (if (i32.eqz (local.get $len))
      (then (return (i64.or (i64.shl (i64.const 32) (i64.const 32)) (i64.const 0x8000000b)))))
    (i64.const 17))                                 ;; ptr 0, 17 bytes: {"action":"none"}
)
