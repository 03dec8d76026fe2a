package shell

import (
	"testing"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Every package-level regexp compiles (they compile on first use, not at init).
func TestRegexpsCompile(t *testing.T) {
	if n := lazyre.CompileAll(); n < 30 {
		t.Errorf("%d regexps, want the package's ~38", n)
	}
}
