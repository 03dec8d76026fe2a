package bundle

import (
	"fmt"
	"os"
)

// Stage copies the bundle at path (a folder, or a .tar.gz/.tgz archive) once into a fresh
// private folder (mode 0700) under parent ("" = the system temp dir) and returns it. Check and
// build the copy, never path again: what is verified is then what is built, however path
// changes meanwhile. The caller removes the copy.
func Stage(path, parent string) (string, error) {
	dst, err := os.MkdirTemp(parent, ".staging-")
	if err != nil {
		return "", fmt.Errorf("bundle: staging: %w", err)
	}
	if IsArchive(path) {
		err = UnpackFile(path, dst)
	} else {
		err = CopyDir(path, dst)
	}
	if err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	return dst, nil
}
