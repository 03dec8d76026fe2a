//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, so two publishers (two
// gateways sharing a data directory) cannot interleave one spool. The
// kernel releases it when the process dies.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s", ErrSpoolLocked, f.Name())
		}
		return fmt.Errorf("audit: lock spool %s: %w", f.Name(), err)
	}
	return nil
}
