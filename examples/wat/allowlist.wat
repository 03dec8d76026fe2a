;; allowlist: a Palisade plugin in hand-written WebAssembly text.
;;
;; Denies every tools/call request whose tool is not listed in the stage config
;; {"tools": ["echo", "add"]} and allows the listed ones. Other methods, and the response
;; phase, get no opinion. A tool name with JSON escapes is denied (fail closed).
;;
;; Linear memory:
;;   0    .. 1023   static strings (keys, verdicts, describe output)
;;   65536 ..       the input envelope, copied from Extism input
;;   after it       the stage config, copied from Extism config "config"
(module
  (import "extism:host/env" "input_length"   (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "input_load_u8"  (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc"          (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length"         (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8"        (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8"       (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set"     (func $output_set (param i64 i64)))
  (import "extism:host/env" "config_get"     (func $config_get (param i64) (result i64)))

  (memory (export "memory") 2)

  (data (i32.const 0)   "config")
  (data (i32.const 16)  "tools/call")
  (data (i32.const 32)  "response")
  (data (i32.const 48)  "tool\22")
  (data (i32.const 56)  "method\22")
  (data (i32.const 64)  "phase\22")
  (data (i32.const 128) "{\22action\22:\22none\22}")
  (data (i32.const 160) "{\22action\22:\22allow\22,\22rule\22:\22allow-list\22,\22reason\22:\22tool is on the allow-list\22}")
  (data (i32.const 256) "{\22action\22:\22deny\22,\22rule\22:\22allow-list\22,\22reason\22:\22tool is not on the allow-list\22,\22labels\22:[\22allow-list\22],\22score\22:1}")
  (data (i32.const 384) "{\22action\22:\22deny\22,\22rule\22:\22allow-list\22,\22reason\22:\22no allow-list configured\22,\22labels\22:[\22allow-list\22],\22score\22:1}")
  (data (i32.const 512) "{\22name\22:\22allowlist\22,\22version\22:\220.1.0\22,\22abi\22:\221.0\22,\22phases\22:[\22request\22],\22capabilities\22:[]}")

  ;; Field spans found by $scan: offset in linear memory and length; length -1 = absent,
  ;; -2 = the string holds an escape.
  (global $m_off (mut i32) (i32.const 0)) (global $m_len (mut i32) (i32.const -1))
  (global $t_off (mut i32) (i32.const 0)) (global $t_len (mut i32) (i32.const -1))
  (global $p_off (mut i32) (i32.const 0)) (global $p_len (mut i32) (i32.const -1))

  ;; $ensure grows memory so that [0, end) is addressable; returns 0 when it cannot.
  (func $ensure (param $end i32) (result i32)
    (local $need i32)
    (local.set $need (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16))
                              (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $need)) (i32.const -1))
        (then (return (i32.const 0))))))
    (i32.const 1))

  ;; $memeq compares n bytes at a and b.
  (func $memeq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (block $no
      (loop $next
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $no (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; $output copies n bytes at ptr into a new Extism block and makes it the output.
  (func $output (param $ptr i32) (param $n i32)
    (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
                        (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $output_set (local.get $blk) (i64.extend_i32_u (local.get $n))))

  ;; $read_input copies the input to 65536 and returns its length, or -1 if it does not fit.
  (func $read_input (result i32)
    (local $n i64) (local $i i64)
    (local.set $n (call $input_length))
    (if (i64.gt_u (local.get $n) (i64.const 0x40000000)) (then (return (i32.const -1))))
    (if (i32.eqz (call $ensure (i32.add (i32.const 65536) (i32.wrap_i64 (local.get $n)))))
      (then (return (i32.const -1))))
    (block $done
      (loop $next
        (br_if $done (i64.gt_u (i64.add (local.get $i) (i64.const 8)) (local.get $n)))
        (i64.store (i32.add (i32.const 65536) (i32.wrap_i64 (local.get $i)))
                   (call $input_load_u64 (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 8)))
        (br $next)))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 65536) (i32.wrap_i64 (local.get $i)))
                    (call $input_load_u8 (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (i32.wrap_i64 (local.get $n)))

  ;; $is_ws reports JSON whitespace.
  (func $is_ws (param $c i32) (result i32)
    (i32.or (i32.or (i32.eq (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 10)))
            (i32.or (i32.eq (local.get $c) (i32.const 13)) (i32.eq (local.get $c) (i32.const 9)))))

  ;; $value reads the string value after a key whose closing quote is at $q. It returns the span
  ;; packed as (offset << 32 | length), with length -1 when the value is not a string and -2 when
  ;; it holds an escape.
  (func $value (param $q i32) (param $end i32) (result i64)
    (local $p i32) (local $start i32) (local $c i32)
    (local.set $p (i32.add (local.get $q) (i32.const 1)))
    (block $bad
      (loop $ws (br_if $bad (i32.ge_u (local.get $p) (local.get $end)))
        (if (call $is_ws (i32.load8_u (local.get $p)))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $ws))))
      (br_if $bad (i32.ne (i32.load8_u (local.get $p)) (i32.const 58))) ;; ':'
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (loop $ws (br_if $bad (i32.ge_u (local.get $p) (local.get $end)))
        (if (call $is_ws (i32.load8_u (local.get $p)))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $ws))))
      (br_if $bad (i32.ne (i32.load8_u (local.get $p)) (i32.const 34))) ;; '"'
      (local.set $start (i32.add (local.get $p) (i32.const 1)))
      (local.set $p (local.get $start))
      (loop $str (br_if $bad (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eq (local.get $c) (i32.const 92)) ;; '\\'
          (then (return (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32))
                                (i64.const 0xfffffffe)))))
        (if (i32.eq (local.get $c) (i32.const 34))
          (then (return (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32))
                                (i64.extend_i32_u (i32.sub (local.get $p) (local.get $start)))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $str)))
    (i64.const 0xffffffff))

  ;; $scan walks the top-level object at [65536, 65536+n) and records the spans of the string
  ;; values of "method", "tool" and "phase". Keys inside nested values are ignored.
  (func $scan (param $n i32)
    (local $p i32) (local $end i32) (local $c i32) (local $depth i32) (local $prev i32)
    (local $span i64) (local $found i32)
    (local.set $p (i32.const 65536))
    (local.set $end (i32.add (i32.const 65536) (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (br_if $done (i32.eq (local.get $found) (i32.const 7)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eq (local.get $c) (i32.const 34)) ;; '"': a key or a string value
          (then
            (if (i32.and (i32.eq (local.get $depth) (i32.const 1))
                         (i32.or (i32.eq (local.get $prev) (i32.const 123)) (i32.eq (local.get $prev) (i32.const 44))))
              (then
                (if (i32.and (i32.le_u (i32.add (local.get $p) (i32.const 8)) (local.get $end))
                             (call $memeq (i32.add (local.get $p) (i32.const 1)) (i32.const 56) (i32.const 7)))
                  (then (local.set $span (call $value (i32.add (local.get $p) (i32.const 7)) (local.get $end)))
                        (global.set $m_off (i32.wrap_i64 (i64.shr_u (local.get $span) (i64.const 32))))
                        (global.set $m_len (i32.wrap_i64 (local.get $span)))
                        (local.set $found (i32.or (local.get $found) (i32.const 1)))))
                (if (i32.and (i32.le_u (i32.add (local.get $p) (i32.const 6)) (local.get $end))
                             (call $memeq (i32.add (local.get $p) (i32.const 1)) (i32.const 48) (i32.const 5)))
                  (then (local.set $span (call $value (i32.add (local.get $p) (i32.const 5)) (local.get $end)))
                        (global.set $t_off (i32.wrap_i64 (i64.shr_u (local.get $span) (i64.const 32))))
                        (global.set $t_len (i32.wrap_i64 (local.get $span)))
                        (local.set $found (i32.or (local.get $found) (i32.const 2)))))
                (if (i32.and (i32.le_u (i32.add (local.get $p) (i32.const 7)) (local.get $end))
                             (call $memeq (i32.add (local.get $p) (i32.const 1)) (i32.const 64) (i32.const 6)))
                  (then (local.set $span (call $value (i32.add (local.get $p) (i32.const 6)) (local.get $end)))
                        (global.set $p_off (i32.wrap_i64 (i64.shr_u (local.get $span) (i64.const 32))))
                        (global.set $p_len (i32.wrap_i64 (local.get $span)))
                        (local.set $found (i32.or (local.get $found) (i32.const 4)))))))
            ;; skip the string, honouring backslash escapes
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (block $closed
              (loop $str
                (br_if $closed (i32.ge_u (local.get $p) (local.get $end)))
                (local.set $c (i32.load8_u (local.get $p)))
                (br_if $closed (i32.eq (local.get $c) (i32.const 34)))
                (if (i32.eq (local.get $c) (i32.const 92))
                  (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br $str)))
            (local.set $prev (i32.const 34)))
          (else
            (if (i32.or (i32.eq (local.get $c) (i32.const 123)) (i32.eq (local.get $c) (i32.const 91)))
              (then (local.set $depth (i32.add (local.get $depth) (i32.const 1))))
              (else (if (i32.or (i32.eq (local.get $c) (i32.const 125)) (i32.eq (local.get $c) (i32.const 93)))
                (then (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))))))
            (if (i32.eqz (call $is_ws (local.get $c))) (then (local.set $prev (local.get $c))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next))))

  ;; $listed reports whether the quoted tool name ("name") occurs in the config block.
  (func $listed (param $cfg_at i32) (param $cfg_len i32) (result i32)
    (local $i i32) (local $last i32) (local $p i32)
    (local.set $last (i32.sub (local.get $cfg_len) (i32.add (global.get $t_len) (i32.const 2))))
    (block $no
      (loop $next
        (br_if $no (i32.gt_s (local.get $i) (local.get $last)))
        (local.set $p (i32.add (local.get $cfg_at) (local.get $i)))
        (if (i32.and
              (i32.and (i32.eq (i32.load8_u (local.get $p)) (i32.const 34))
                       (i32.eq (i32.load8_u (i32.add (local.get $p) (i32.add (global.get $t_len) (i32.const 1)))) (i32.const 34)))
              (call $memeq (i32.add (local.get $p) (i32.const 1)) (global.get $t_off) (global.get $t_len)))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  (func (export "evaluate") (result i32)
    (local $n i32) (local $key i64) (local $cfg i64) (local $cfg_len i32) (local $cfg_at i32) (local $i i32)
    (local.set $n (call $read_input))
    (if (i32.lt_s (local.get $n) (i32.const 0))
      (then (call $output (i32.const 384) (i32.const 107)) (return (i32.const 0))))
    (global.set $m_len (i32.const -1)) (global.set $t_len (i32.const -1)) (global.set $p_len (i32.const -1))
    (call $scan (local.get $n))
    ;; response phase or another method: no opinion
    (if (i32.and (i32.eq (global.get $p_len) (i32.const 8))
                 (call $memeq (global.get $p_off) (i32.const 32) (i32.const 8)))
      (then (call $output (i32.const 128) (i32.const 17)) (return (i32.const 0))))
    (if (i32.eqz (i32.and (i32.eq (global.get $m_len) (i32.const 10))
                          (call $memeq (global.get $m_off) (i32.const 16) (i32.const 10))))
      (then (call $output (i32.const 128) (i32.const 17)) (return (i32.const 0))))
    (if (i32.eq (global.get $t_len) (i32.const -1))
      (then (call $output (i32.const 128) (i32.const 17)) (return (i32.const 0))))
    (if (i32.lt_s (global.get $t_len) (i32.const 0))
      (then (call $output (i32.const 256) (i32.const 112)) (return (i32.const 0))))
    ;; fetch the config and copy it after the input
    (local.set $key (call $alloc (i64.const 6)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (i32.const 6)))
      (call $store_u8 (i64.add (local.get $key) (i64.extend_i32_u (local.get $i))) (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.set $cfg (call $config_get (local.get $key)))
    (if (i64.eqz (local.get $cfg))
      (then (call $output (i32.const 384) (i32.const 107)) (return (i32.const 0))))
    (local.set $cfg_len (i32.wrap_i64 (call $length (local.get $cfg))))
    (local.set $cfg_at (i32.add (i32.const 65536) (local.get $n)))
    (if (i32.eqz (call $ensure (i32.add (local.get $cfg_at) (local.get $cfg_len))))
      (then (call $output (i32.const 384) (i32.const 107)) (return (i32.const 0))))
    (local.set $i (i32.const 0))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $cfg_len)))
      (i32.store8 (i32.add (local.get $cfg_at) (local.get $i))
                  (call $load_u8 (i64.add (local.get $cfg) (i64.extend_i32_u (local.get $i)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (if (call $listed (local.get $cfg_at) (local.get $cfg_len))
      (then (call $output (i32.const 160) (i32.const 75)))
      (else (call $output (i32.const 256) (i32.const 112))))
    (i32.const 0))

  (func (export "describe") (result i32)
    (call $output (i32.const 512) (i32.const 89))
    (i32.const 0))
)
