// Package jsonw appends JSON values to a byte slice without reflection, for plugins that build
// their verdicts by hand on the hot path (encoding/json costs hundreds of µs inside Wasm). It is
// pure Go with no go-pdk, so host and native tests use it too.
package jsonw

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
