;; A direct-convention plugin whose linear memory grows by one page on every evaluate and is
;; never given back, as a Go guest's heap can creep: used by TestRetireNearTheCap. It answers
;; {"action":"none"} while memory.grow succeeds and traps (unreachable) once it fails.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22action\22:\22none\22}")  ;; 17 bytes at 0
  (func (export "palisade_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "evaluate") (param $len i32) (result i64)
    (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
    (i64.const 17))                                 ;; ptr 0, 17 bytes
)
