;; A direct-convention plugin (ABI 1.1) that runs away on request: the first input byte picks how.
;;   l  a call-free loop (loop br 0)
;;   r  unbounded recursion (ends in a stack overflow or the timeout)
;;   f  fib(90): about 2^90 calls in a shallow stack, no loop
;;   t  calls host function tick in an endless loop
;;   b  calls host function block (which waits until its context ends) in an endless loop
;; Anything else answers {"action":"none"}. Used by TestRunawayIsStopped and the fuzz seeds;
;; runaway_extism.wat is the same on the Extism convention.
(module
  (import "palisade" "tick" (func $tick (param i32 i32) (result i32)))
  (import "palisade" "block" (func $block (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22action\22:\22none\22}")  ;; 17 bytes at 0
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func $deep (param $n i32) (result i32)
    (i32.add (call $deep (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))
  (func $fib (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "evaluate") (param $len i32) (result i64)
    (local $c i32)
    (if (local.get $len) (then (local.set $c (i32.load8_u (i32.const 1024)))))
    (if (i32.eq (local.get $c) (i32.const 108)) (then (loop $spin (br $spin))))
    (if (i32.eq (local.get $c) (i32.const 114)) (then (drop (call $deep (i32.const 0)))))
    (if (i32.eq (local.get $c) (i32.const 102)) (then (drop (call $fib (i32.const 90)))))
    (if (i32.eq (local.get $c) (i32.const 116))
      (then (loop $again (drop (call $tick (i32.const 0) (i32.const 0))) (br $again))))
    (if (i32.eq (local.get $c) (i32.const 98))
      (then (loop $again (drop (call $block (i32.const 0) (i32.const 0))) (br $again))))
    (i64.const 17))                                 ;; ptr 0, 17 bytes
)
