// Package atomicfile replaces a file's contents atomically: the engine's state files (the
// bundle manager's sequences, history and shadow, the passkeys, the fixture memo, the plugin
// compilation cache) are each written by Write, so a reader or a crash sees the old file or the
// new one, never a torn one. It wraps github.com/google/renameio/v2 (temporary file, fsync,
// rename) and pins the two things a security file needs: the temporary file is made in the
// target's own folder (never $TMPDIR), and the result has exactly the mode asked, whatever an
// existing file had.
package atomicfile

import (
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// Write replaces path with b, mode perm (not reduced by the umask, not copied from an existing
// file).
func Write(path string, b []byte, perm os.FileMode) error {
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(perm))
	if err != nil {
		return err
	}
	defer t.Cleanup()
	if _, err := t.Write(b); err != nil {
		return err
	}
	return t.CloseAtomicallyReplace()
}
