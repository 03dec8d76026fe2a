package detect

// Windowed matching keeps a long text from costing every candidate rule a full regexp pass.
// Go's regexp has no DFA: an unanchored search steps its NFA over every byte of the text
// (~0.5-1 µs per byte for a dozen candidate rules natively, 5-10× that in Wasm), so a 32 KiB
// document took most of the injection stage's time budget in a guest. For most rules the
// generator (window_gen_test.go) finds an anchor: literals one of which every match holds at
// most pre bytes after its start. A match can then only start in [p-pre, p] for an
// occurrence p of an anchor literal, and the regexp runs anchored at those starts only, in
// order, with the rune before each start as context (so \b, ^ and \A judge it as the full
// text would). The first start that matches is the leftmost match, and leftmost-first
// preference at one start does not depend on where the search began: the result is the
// full search's, byte for byte (TestWindowedAgrees, FuzzWindowed). A rule gets an anchor only
// if runs from different occurrences cannot overlap by more than a bounded part (every
// unbounded repetition stops at an anchor literal's first rune: linearRuns), so windows never
// read a long line once per occurrence where the full search reads it once.

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// anchor is one rule's window anchor (generated: genAnchors); pre < 0 means none.
type anchor struct {
	pre  int
	lits []string
}

// windowMin is the shortest text matched by windows: below it a full pass costs about as
// much as finding the anchors.
const windowMin = 1024

// maxStarts bounds the candidate starts of one search (16 KiB of them).
const maxStarts = 4096

// windowed holds a rule's two anchored forms, compiled on first use.
type windowed struct {
	anchor
	atStart func() *regexp.Regexp // \A(?:expr): a start at the text's first byte
	inText  func() *regexp.Regexp // \A(?s:.)(?:expr) on the text from the rune before the start
}

func newWindowed(a anchor, expr string) *windowed {
	if a.pre < 0 || len(a.lits) == 0 {
		return nil
	}
	return &windowed{
		anchor:  a,
		atStart: lazyRegexp(`\A(?:` + expr + `)`),
		inText:  lazyRegexp(`\A(?s:.)(?:` + expr + `)`),
	}
}

// startsPool holds the candidate starts of one search.
var startsPool = sync.Pool{New: func() any { s := make([]int32, 0, 256); return &s }}

// find is FindStringSubmatchIndex (sub) or FindStringIndex of the rule's expr on t, or
// ok=false when windows would not be cheaper (the caller then searches the whole text).
// valid says t is valid UTF-8 (voter.validUTF8: checked once per text, not once per rule);
// windows need it, as their starts are the first bytes of runes.
func (w *windowed) find(t string, sub, valid bool) (loc []int, ok bool) {
	if len(t) < windowMin || len(t) > 1<<30 || !valid {
		return nil, false
	}
	sp := startsPool.Get().(*[]int32)
	defer startsPool.Put(sp)
	starts, ok := w.starts(t, sp)
	if !ok {
		return nil, false
	}
	for _, s := range starts {
		if loc := w.matchAt(t, int(s), sub); loc != nil {
			return loc, true
		}
	}
	return nil, true
}

// starts returns the candidate starts of a match in t (valid UTF-8), sorted and without
// repeats, or ok=false when there are more than one unanchored pass over t costs. It uses
// *sp's memory (startsPool) and leaves the grown slice there.
func (w *windowed) starts(t string, sp *[]int32) (starts []int32, ok bool) {
	starts = (*sp)[:0]
	// More tries than len(t)/16 cost more than one unanchored pass over t; more than
	// maxStarts would make the list itself a large allocation in a guest.
	budget := min(len(t)/16, maxStarts)
	for _, l := range w.lits {
		for i := 0; ; {
			j := strings.Index(t[i:], l)
			if j < 0 {
				break
			}
			p := i + j
			for q := max(p-w.pre, 0); q <= p; q++ {
				if t[q]&0xC0 != 0x80 { // a rune's first byte: where the full search tries
					starts = append(starts, int32(q))
				}
			}
			if len(starts) > budget {
				*sp = starts
				return nil, false
			}
			i = p + 1
		}
	}
	*sp = starts
	if len(starts) == 0 {
		return nil, true
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	return starts, true
}

// matchAt is the match of the rule's expr that starts at q, or nil (FindStringSubmatchIndex
// when sub), judged with the rune before q as context.
func (w *windowed) matchAt(t string, q int, sub bool) (loc []int) {
	if q == 0 {
		if sub {
			return w.atStart().FindStringSubmatchIndex(t)
		}
		return w.atStart().FindStringIndex(t)
	}
	_, n := utf8.DecodeLastRuneInString(t[:q])
	base := q - n
	if sub {
		loc = w.inText().FindStringSubmatchIndex(t[base:])
	} else {
		loc = w.inText().FindStringIndex(t[base:])
	}
	if loc == nil {
		return nil
	}
	for i := range loc {
		if loc[i] >= 0 {
			loc[i] += base
		}
	}
	loc[0] = q // the context rune is not part of the match
	return loc
}
