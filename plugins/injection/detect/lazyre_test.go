package detect

import (
	"testing"

	"github.com/added060/palisade/plugins/internal/lazyre"
)

// Every package-level regexp compiles (they compile on first use, not at init).
func TestRegexpsCompile(t *testing.T) {
	if n := lazyre.CompileAll(); n < 80 {
		t.Errorf("%d regexps, want the package's ~100 (detect and shell)", n)
	}
}
