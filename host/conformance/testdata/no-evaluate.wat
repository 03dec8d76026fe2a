;; Exports describe but not evaluate.
(module
  (func (export "describe") (result i32) (i32.const 0)))
