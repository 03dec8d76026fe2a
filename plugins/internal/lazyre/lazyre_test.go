package lazyre_test

import (
	"regexp"
	"sync"
	"testing"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// A Regexp answers as the regexp it compiles, compiled once however many goroutines ask.
func TestLazyMatchesRegexp(t *testing.T) {
	const expr = `(a+)(b*)`
	l, re := lazyre.New(expr), regexp.MustCompile(expr)
	var wg sync.WaitGroup
	got := make([]*regexp.Regexp, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = l.Compiled() }()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("compiled more than once")
		}
	}
	s := "xaab ab aaa"
	if l.MatchString(s) != re.MatchString(s) || l.FindString(s) != re.FindString(s) ||
		l.ReplaceAllString(s, "-") != re.ReplaceAllString(s, "-") || len(l.FindAllString(s, -1)) != 3 ||
		len(l.FindAllStringSubmatch(s, -1)) != len(re.FindAllStringSubmatch(s, -1)) || l.String() != expr {
		t.Error("lazy regexp answers differently")
	}
	found := false
	for _, x := range lazyre.All() {
		found = found || x == l
	}
	if !found {
		t.Error("All does not list a Regexp made with New")
	}
}
