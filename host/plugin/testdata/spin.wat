;; A loop-heavy direct-convention plugin for BenchmarkInterruption: the first input byte picks
;; the work, then it answers {"action":"none"}.
;;   l  a tight loop of 2^20 iterations (one loop header per iteration)
;;   c  the same loop calling a small function each iteration (a function entry too)
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22action\22:\22none\22}")  ;; 17 bytes at 0
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func $step (param $acc i32) (param $i i32) (result i32)
    (i32.add (i32.mul (local.get $acc) (i32.const 31)) (local.get $i)))
  (func (export "evaluate") (param $len i32) (result i64)
    (local $i i32) (local $acc i32)
    (if (i32.eq (i32.load8_u (i32.const 1024)) (i32.const 99))
      (then (loop $c
        (local.set $acc (call $step (local.get $acc) (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $c (i32.lt_u (local.get $i) (i32.const 0x100000)))))
      (else (loop $l
        (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 31)) (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (i32.const 0x100000))))))
    (i32.store (i32.const 64) (local.get $acc))
    (i64.const 17))
)
