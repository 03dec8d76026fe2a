;; evaluate always traps.
(module
  (func (export "evaluate") (result i32) unreachable))
