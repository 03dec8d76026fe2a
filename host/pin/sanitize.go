package pin

import (
	"regexp"
	"strings"
	"unicode"
)

// ansi matches CSI sequences (ESC [ ... final), OSC sequences (ESC ] ... BEL or ESC \), and any
// other two-byte escape.
var ansi = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-_]?|\u009b[0-?]*[ -/]*[@-~]")

// Sanitize removes ANSI escape sequences and invisible characters (zero-width and bidi controls,
// Unicode tag characters, other format and control characters except newline and tab) from a
// tool description, so text hidden from the person cannot steer the model.
func Sanitize(s string) string {
	if !needsSanitize(s) {
		return s
	}
	s = ansi.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

func needsSanitize(s string) bool {
	for _, r := range s {
		if r == 0x1b || invisible(r) {
			return true
		}
	}
	return false
}

func invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || (r >= 0x7f && r < 0xa0): // C0 and C1 controls
		return true
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x180e, r == 0x3164, r == 0xffa0:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x206f, r == 0xfeff:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0000 && r <= 0xe0fff: // variation selectors, tags
		return true
	case r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
