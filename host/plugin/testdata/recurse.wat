;; A direct-convention plugin that never returns without a single loop: evaluate calls $fib(90),
;; which recurses exponentially (about 2^90 calls, within a shallow stack). Only a check at
;; function entry can stop it. Used by TestRecursionWithoutLoopsIsStopped.
(module
  (memory (export "memory") 1)
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func $fib (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "evaluate") (param i32) (result i64)
    (drop (call $fib (i32.const 90)))
    (i64.const 0))
)
