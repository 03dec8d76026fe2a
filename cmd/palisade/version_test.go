package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/added060/palisade/host/version"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestVersionCommand checks `palisade version` and `palisade --version` print the version and
// exit 0, in process and from a binary the way the Makefile stamps it.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := runKong(t, args, nil)
		if code != exitOK || strings.TrimSpace(out) != version.String() {
			t.Errorf("%v: exit %d, stdout %q, want 0 and %q (stderr %q)", args, code, out, version.String(), errs)
		}
	}
	code, out, _ := runKong(t, []string{"version", "--verbose"}, nil)
	// A test binary is linked without the first-party module's digest: nothing runs natively.
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != exitOK || len(lines) != 4 || lines[0] != version.String() ||
		!strings.Contains(lines[1], "envelope schema: "+abi.Version) || !strings.Contains(lines[2], "direct 1") ||
		!strings.HasPrefix(lines[3], "runs natively: none") {
		t.Errorf("version --verbose: exit %d, stdout %q", code, out)
	}
	bin := palisadeBinary(t)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != testStamp {
			t.Errorf("palisade %v: %v, output %q, want %q", args, err, out, testStamp)
		}
	}
}
