;; allowlist: a Palisade plugin in hand-written WebAssembly text.
;;
;; Denies every tools/call request whose tool is not listed in the stage config
;; {"tools": ["echo", "add"]} and allows the listed ones. Other methods, and the response
;; phase, get no opinion. A tool name with JSON escapes is denied (fail closed).
;;
;; It is on the direct calling convention (sdk/ABI.md): the host writes the envelope where
;; palisade_alloc says and reads the verdict evaluate's packed result points at.
;;
;; Linear memory:
;;   0    .. 1023   static strings (keys, verdicts, describe output)
;;   65536 ..       the input envelope, written there by the host (palisade_alloc)
;;   after it       the stage config, copied from the host with config_get and result_read
(module
  (import "palisade" "config_get"  (func $config_get (param i32 i32) (result i32)))
  (import "palisade" "result_read" (func $result_read (param i32)))

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
  (data (i32.const 512) "{\22name\22:\22allowlist\22,\22version\22:\220.1.0\22,\22abi\22:\221.1\22,\22phases\22:[\22request\22],\22capabilities\22:[]}")

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

  ;; $output packs n bytes at ptr as an export's result, (ptr << 32) | n: the host reads them.
  (func $output (param $ptr i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))

  ;; palisade_alloc makes room for the next call's input at 65536; the host writes it there.
  ;; An input past the memory cap traps, which the host handles by the stage's failure mode.
  (func (export "palisade_alloc") (param $len i32) (result i32)
    (if (i32.gt_u (local.get $len) (i32.const 0x40000000)) (then unreachable))
    (if (i32.eqz (call $ensure (i32.add (i32.const 65536) (local.get $len)))) (then unreachable))
    (i32.const 65536))

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

  (func (export "evaluate") (param $n i32) (result i64)
    (local $cfg_len i32) (local $cfg_at i32)
    (global.set $m_len (i32.const -1)) (global.set $t_len (i32.const -1)) (global.set $p_len (i32.const -1))
    (call $scan (local.get $n))
    ;; response phase or another method: no opinion
    (if (i32.and (i32.eq (global.get $p_len) (i32.const 8))
                 (call $memeq (global.get $p_off) (i32.const 32) (i32.const 8)))
      (then (return (call $output (i32.const 128) (i32.const 17)))))
    (if (i32.eqz (i32.and (i32.eq (global.get $m_len) (i32.const 10))
                          (call $memeq (global.get $m_off) (i32.const 16) (i32.const 10))))
      (then (return (call $output (i32.const 128) (i32.const 17)))))
    (if (i32.eq (global.get $t_len) (i32.const -1))
      (then (return (call $output (i32.const 128) (i32.const 17)))))
    (if (i32.lt_s (global.get $t_len) (i32.const 0))
      (then (return (call $output (i32.const 256) (i32.const 112)))))
    ;; fetch the config (key "config", the 6 bytes at 0) and copy it after the input
    (local.set $cfg_len (call $config_get (i32.const 0) (i32.const 6)))
    (if (i32.lt_s (local.get $cfg_len) (i32.const 0))
      (then (return (call $output (i32.const 384) (i32.const 107)))))
    (local.set $cfg_at (i32.add (i32.const 65536) (local.get $n)))
    (if (i32.eqz (call $ensure (i32.add (local.get $cfg_at) (local.get $cfg_len))))
      (then (return (call $output (i32.const 384) (i32.const 107)))))
    (call $result_read (local.get $cfg_at))
    (if (result i64) (call $listed (local.get $cfg_at) (local.get $cfg_len))
      (then (call $output (i32.const 160) (i32.const 75)))
      (else (call $output (i32.const 256) (i32.const 112)))))

  (func (export "describe") (param i32) (result i64)
    (call $output (i32.const 512) (i32.const 89)))
)
