package detect

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Category is one class of attack the detector scores.
type Category int

// Categories, in report order. Their names are the labels of data/split.
const (
	PathTraversal Category = iota
	SensitivePaths
	SQLInjection
	CommandInjection
	SSRF
	XSS
	PromptInjection
	NumCategories
)

var categoryNames = [NumCategories]string{
	"path_traversal", "sensitive_paths", "sql_injection", "command_injection",
	"ssrf", "xss", "prompt_injection",
}

// String returns the category's label.
func (c Category) String() string {
	if c < 0 || c >= NumCategories {
		return "unknown"
	}
	return categoryNames[c]
}

// ParseCategory returns the category with the given label.
func ParseCategory(s string) (Category, bool) {
	for i, n := range categoryNames {
		if n == s {
			return Category(i), true
		}
	}
	return 0, false
}

// Categories lists every category.
func Categories() []Category {
	out := make([]Category, NumCategories)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

// Hit is one rule or statistical vote that fired, with the text it matched.
type Hit struct {
	Category Category
	Rule     string
	Weight   float64
	Match    string // the matched normalized text, at most maxMatch bytes
	// Uncertain marks a parser's finding a careful reviewer would ask about rather than
	// refuse (shell.Finding.Uncertain): a category whose every hit is uncertain asks.
	Uncertain bool
}

const maxMatch = 120

// Result is the detector's view of one text.
type Result struct {
	// Scores holds each category's score in [0,1]: the noisy-OR of its votes' weights.
	Scores [NumCategories]float64
	// Hits lists the votes that fired, strongest first.
	Hits []Hit
	// Stats are the statistical features of the normalized text.
	Stats Stats
	// Norm is the normalized text and what normalization undid.
	Norm Normalized
	// Truncated is set when the text was longer than MaxScanBytes and only its head and tail
	// were scanned (the verdict is then incomplete).
	Truncated bool
	// hides remembers whether Norm.Text hides a part of itself (hidesPart, docs.go).
	hides hidesMemo
}

// MaxScanBytes caps the text one Scan looks at. It is the gateway's body limit (4 MiB), so a
// string of any envelope the host accepts is scanned whole. A longer string (a host with a
// larger limit) is scanned as its first ScanHeadBytes and its last MaxScanBytes-ScanHeadBytes
// bytes, joined by a space; Result.Truncated says so, and the verdict is marked incomplete so
// the stage's failure mode applies.
const (
	MaxScanBytes  = 4 << 20
	ScanHeadBytes = 3 << 20
)

// window returns text cut to MaxScanBytes as described there, on UTF-8 boundaries.
func window(text string) (string, bool) {
	if len(text) <= MaxScanBytes {
		return text, false
	}
	h := ScanHeadBytes
	for h > 0 && text[h]&0xC0 == 0x80 {
		h--
	}
	tl := len(text) - (MaxScanBytes - ScanHeadBytes)
	for tl < len(text) && text[tl]&0xC0 == 0x80 {
		tl++
	}
	return text[:h] + " " + text[tl:], true
}

// Top returns the highest-scoring category and its score.
func (r *Result) Top() (Category, float64) {
	best, bs := Category(0), -1.0
	for i, s := range r.Scores {
		if s > bs {
			best, bs = Category(i), s
		}
	}
	return best, bs
}

// Options configures a Detector. The zero value uses the defaults.
type Options struct {
	// Thresholds per category (default DefaultThreshold); a category fires at
	// score >= threshold - Margin.
	Thresholds map[Category]float64
	// Margin is the fail-safe margin subtracted from every threshold (default 0.05): a score
	// just under the threshold still fires, so rounding and tuning error err towards blocking.
	Margin *float64
	// Disabled categories are neither scored nor reported.
	Disabled map[Category]bool
	// RulesOff categories stay enabled, but Scan runs none of their rules: only votes added
	// after Scan (a parser's findings, see judgeKind) score them.
	RulesOff map[Category]bool
	// Exhaustive runs every prompt-injection rule a text selects even after the category is
	// certain (see certainScore). Exclusions that name rules need it: they drop a finding only
	// when every rule behind it is one they name, so a rule left unrun could drop one.
	Exhaustive bool
}

// certainScore is the prompt-injection score past which Scan runs no more prompt-injection
// rules (unless Options.Exhaustive): the category fires whatever else matches, and a long
// jailbreak selects fifty of them, each a pass over the whole text. Only prompt injection
// stops early: the argument kinds' post-processing of the other categories (backtick code
// spans, quoted flags) recomputes their scores from the hits, and needs them all.
const certainScore = 0.999

// DefaultThreshold is the score at which a category fires before the margin.
const DefaultThreshold = 0.7

// DefaultMargin is the fail-safe margin.
const DefaultMargin = 0.05

// Detector scores texts. It is immutable after New and safe for concurrent use.
type Detector struct {
	cut     [NumCategories]float64 // effective threshold: threshold - margin
	enabled [NumCategories]bool
	rulesOn [NumCategories]bool
	// exhaustive: see Options.Exhaustive.
	exhaustive bool
}

// New returns a detector with opts applied.
func New(opts Options) *Detector {
	d := &Detector{exhaustive: opts.Exhaustive}
	margin := DefaultMargin
	if opts.Margin != nil {
		margin = *opts.Margin
	}
	for c := Category(0); c < NumCategories; c++ {
		t := DefaultThreshold
		if v, ok := opts.Thresholds[c]; ok {
			t = v
		}
		d.cut[c] = t - margin
		d.enabled[c] = !opts.Disabled[c]
		d.rulesOn[c] = d.enabled[c] && !opts.RulesOff[c]
	}
	return d
}

// Cut returns the effective threshold of c (threshold minus margin).
func (d *Detector) Cut(c Category) float64 { return d.cut[c] }

// Fired returns the enabled categories whose score reaches their effective threshold.
func (d *Detector) Fired(r *Result) []Category {
	var out []Category
	for c := Category(0); c < NumCategories; c++ {
		if d.enabled[c] && r.Scores[c] >= d.cut[c] {
			out = append(out, c)
		}
	}
	return out
}

// Scan normalizes text and scores it in every enabled category.
func (d *Detector) Scan(text string) Result {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		sc.reset()
		scratchPool.Put(sc)
	}()
	return d.scan(text, sc)
}

// scan is Scan on the zeroed scratch sc, which it leaves for sc.reset.
func (d *Detector) scan(text string, sc *scratch) Result {
	var r Result
	text, r.Truncated = window(text)
	r.Norm = Normalize(text)
	r.Stats = computeStats(r.Norm.Text)
	v := newVoter(&d.enabled)
	v.exhaustive = d.exhaustive
	t := r.Norm.Text
	both := sc.candidates(t)
	v.cand, v.voted = both[:len(allRules)], both[len(allRules):]
	v.cands, v.candsOK = sc.cands, sc.candsOK
	// A disabled (or RulesOff) category's rules are not run at all: the response phase and the
	// argument kinds that judge few categories pay only for what they judge.
	if d.rulesOn[PathTraversal] {
		scanTraversal(&v, text, &r.Norm)
	}
	if d.rulesOn[SensitivePaths] {
		scanSensitive(&v, t)
	}
	if d.rulesOn[SQLInjection] {
		scanSQL(&v, t)
	}
	if d.rulesOn[CommandInjection] {
		scanCommand(&v, text, t, &r.Norm)
	}
	if d.rulesOn[SSRF] {
		scanSSRF(&v, t, &r.Norm)
	}
	if d.rulesOn[XSS] {
		scanXSS(&v, t)
	}
	if d.rulesOn[PromptInjection] {
		scanPrompt(&v, t, &r.Norm)
	}
	statVotes(&v, &r.Stats)
	for c := range v.miss {
		if v.miss[c] < 1 {
			r.Stats.Entropy = entropy(t) // evidence for the audit, not a vote: only when something scored
			break
		}
	}
	for c := range v.miss {
		r.Scores[c] = 1 - v.miss[c]
	}
	// Heaviest first, ties in the order the rules voted. slices, not sort.SliceStable: the
	// latter reflects on the slice on every scan, hits or none (issue 27).
	slices.SortStableFunc(v.hits, func(a, b Hit) int { return cmp.Compare(b.Weight, a.Weight) })
	r.Hits = v.hits
	if r.Scores[PromptInjection] > 0 {
		plainProse(&r)
	}
	return r
}

// voter accumulates weighted votes per category as a noisy-OR: each vote of weight w leaves
// (1-w) of the remaining doubt.
type voter struct {
	enabled *[NumCategories]bool
	miss    [NumCategories]float64
	hits    []Hit
	cand    []bool  // rules the prefilter allows to run
	cands   []int32 // the same rules in id order, when candsOK (scratch.cands)
	candsOK bool
	voted   []bool             // rule groups that already voted
	strong  [NumCategories]int // rule votes of weight >= 0.45: pattern density
	// exhaustive: run every selected rule (Options.Exhaustive).
	exhaustive bool
	// utf8 remembers whether the last long text windows asked about is valid UTF-8, so each
	// text is checked once however many rules search it.
	utf8 utf8Memo
}

// validUTF8 reports utf8.ValidString(t), checking a text only once (utf8Memo).
func (v *voter) validUTF8(t string) bool { return v.utf8.valid(t) }

// utf8Memo remembers whether one text is valid UTF-8: the rules of one evaluation search the
// same string many times. The same string is the same bytes and length; holding it in t keeps
// its memory from being reused for another text.
type utf8Memo struct {
	t  string
	ok bool
}

// valid reports utf8.ValidString(t), checked again only when t is another string than the
// last one asked about.
func (m *utf8Memo) valid(t string) bool {
	if t == "" {
		return true
	}
	if len(t) != len(m.t) || unsafe.StringData(t) != unsafe.StringData(m.t) {
		m.t, m.ok = t, utf8.ValidString(t)
	}
	return m.ok
}

// done reports whether the rules of category c need not run: c is prompt injection and
// already certain (see certainScore).
func (v *voter) done(c Category) bool {
	return c == PromptInjection && !v.exhaustive && 1-v.miss[c] >= certainScore
}

func newVoter(enabled *[NumCategories]bool) voter {
	v := voter{enabled: enabled}
	for i := range v.miss {
		v.miss[i] = 1
	}
	return v
}

func (v *voter) add(c Category, rule string, w float64, match string) {
	if !v.enabled[c] {
		return
	}
	if len(match) > maxMatch {
		match = truncateUTF8(match, maxMatch)
	}
	v.miss[c] *= 1 - w
	if w >= 0.45 && !strings.HasPrefix(rule, "stat:") {
		v.strong[c]++
	}
	v.hits = append(v.hits, Hit{Category: c, Rule: rule, Weight: w, Match: match})
}

func (v *voter) score(c Category) float64 {
	return 1 - v.miss[c]
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Stats are cheap statistical features of a normalized text.
type Stats struct {
	Len          int
	Entropy      float64 // Shannon entropy in bits per byte; computed only for texts that scored
	SpecialRatio float64 // share of bytes that are ASCII punctuation or symbols
	DigitRatio   float64
	SpaceRatio   float64
	NonASCII     float64 // share of bytes >= 0x80
}

func computeStats(t string) Stats {
	s := Stats{Len: len(t)}
	if len(t) == 0 {
		return s
	}
	var counts [5]int // by byteClass: letter, special, digit, space, high
	for i := 0; i < len(t); i++ {
		counts[byteClass[t[i]]]++
	}
	special, digit, space, high := counts[1], counts[2], counts[3], counts[4]
	n := float64(len(t))
	s.SpecialRatio = float64(special) / n
	s.DigitRatio = float64(digit) / n
	s.SpaceRatio = float64(space) / n
	s.NonASCII = float64(high) / n
	return s
}

// byteClass classifies bytes for computeStats: 0 letter, 1 ASCII punctuation or symbol
// (controls included), 2 digit, 3 space or newline, 4 non-ASCII.
var byteClass = func() (m [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			m[c] = 4
		case c == ' ' || c == '\n':
			m[c] = 3
		case c >= '0' && c <= '9':
			m[c] = 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			m[c] = 0
		default:
			m[c] = 1
		}
	}
	return m
}()

// statVotes adds the statistical votes: payload-shaped text (dense punctuation, few spaces)
// strengthens the syntax categories a rule already hit, and many distinct rule hits in one
// category (pattern density) strengthen it further.
func statVotes(v *voter, s *Stats) {
	payloadShaped := s.Len >= 6 && s.SpecialRatio >= 0.22 && s.SpaceRatio < 0.12
	for _, c := range []Category{PathTraversal, SQLInjection, CommandInjection, XSS} {
		sc := v.score(c)
		if sc == 0 {
			continue
		}
		if payloadShaped && sc >= 0.3 {
			v.add(c, "stat:special_ratio", 0.3, "")
		}
	}
	for c := Category(0); c < NumCategories; c++ {
		if v.strong[c] >= 3 {
			v.add(c, "stat:pattern_density", 0.3, "")
		}
	}
}

// snippet returns the match of loc in t.
func snippet(t string, loc []int) string {
	if loc == nil {
		return ""
	}
	return strings.TrimSpace(t[loc[0]:loc[1]])
}

// entropy is the Shannon entropy of t in bits per byte.
func entropy(t string) float64 {
	var freq [256]int
	for i := 0; i < len(t); i++ {
		freq[t[i]]++
	}
	e, n := 0.0, float64(len(t))
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}
