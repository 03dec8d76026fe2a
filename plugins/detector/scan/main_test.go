package scan

import (
	"testing"

	"github.com/added060/palisade/internal/testbuild"
)

// TestMain removes the folders this package's tests built binaries into (testbuild.TempDir).
func TestMain(m *testing.M) { testbuild.Main(m) }
