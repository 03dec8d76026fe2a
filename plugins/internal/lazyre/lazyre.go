// Package lazyre is a regexp compiled on its first use. A package-level regexp.MustCompile runs
// in the package's init, in every Wasm instance of every module that links the package: the
// first-party module (plugins/firstparty) links the injection and shell packages into every
// role, and their ~100 regexps took ~2 MB of each instance's heap whether the role used them or
// not. The expressions are the same; an invalid one panics on first use instead of at init
// (each package's tests compile all of theirs).
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is expr, compiled by the first method called. Safe for concurrent use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns expr to compile on first use.
func New(expr string) *Regexp {
	l := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, l)
	mu.Unlock()
	return l
}

// All returns every Regexp made so far (package-level ones once their package is initialised),
// for tests that compile them all.
func All() []*Regexp {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Regexp(nil), all...)
}

// CompileAll compiles every Regexp made so far and returns how many there are; an invalid
// expression panics, as it would on first use. Each package's tests call it.
func CompileAll() int {
	rs := All()
	for _, r := range rs {
		r.Compiled()
	}
	return len(rs)
}

// Compiled returns the compiled regexp, compiling it now if no method has.
func (l *Regexp) Compiled() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// String is the expression.
func (l *Regexp) String() string { return l.expr }

func (l *Regexp) MatchString(s string) bool      { return l.Compiled().MatchString(s) }
func (l *Regexp) FindString(s string) string     { return l.Compiled().FindString(s) }
func (l *Regexp) FindStringIndex(s string) []int { return l.Compiled().FindStringIndex(s) }
func (l *Regexp) FindStringSubmatch(s string) []string {
	return l.Compiled().FindStringSubmatch(s)
}
func (l *Regexp) FindAllString(s string, n int) []string { return l.Compiled().FindAllString(s, n) }
func (l *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return l.Compiled().FindAllStringIndex(s, n)
}
func (l *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.Compiled().FindAllStringSubmatch(s, n)
}
func (l *Regexp) ReplaceAllString(src, repl string) string {
	return l.Compiled().ReplaceAllString(src, repl)
}
