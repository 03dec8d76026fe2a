package plugin

import (
	"errors"
	"strings"

	"github.com/tetratelabs/wazero/sys"
)

func isTimeout(err error) bool {
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode() == sys.ExitCodeDeadlineExceeded
	}
	return strings.Contains(err.Error(), "deadline exceeded")
}

// isTrap reports whether err came from the Wasm module failing (a trap, an exit, a closed
// module) rather than the plugin returning an error it set itself.
func isTrap(err error) bool {
	var ee *sys.ExitError
	if errors.As(err, &ee) || errors.Is(err, errNativePanic) {
		return true
	}
	s := err.Error()
	for _, m := range []string{"wasm error", "stack overflow", "module closed", "module is closed", "out of bounds", "unreachable", "memory", "failed to initialize runtime", "exit_code"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
