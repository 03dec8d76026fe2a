package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// fetchGo downloads m through the Go module proxy (the go command's own cache) and returns
// the module's folder.
func fetchGo(m goModule) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", m.Path+"@"+m.Version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", m.Path, m.Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", m.Path, m.Version, err)
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, info.Error)
	}
	return info.Dir, nil
}

// fetchNPM packs p with npm into cache (once) and unpacks it there; it returns the folder
// holding package.json.
func fetchNPM(cache string, p npmPackage) (string, error) {
	dir := filepath.Join(cache, "npm", p.Name+"@"+p.Version)
	if _, err := os.Stat(filepath.Join(dir, "package", "package.json")); err == nil {
		return filepath.Join(dir, "package"), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "pack", "--silent", p.Name+"@"+p.Version)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s@%s: %w", p.Name, p.Version, err)
	}
	tgz := filepath.Join(dir, strings.TrimSpace(string(out)))
	if err := untgz(tgz, dir); err != nil {
		return "", fmt.Errorf("unpack %s: %w", tgz, err)
	}
	return filepath.Join(dir, "package"), nil
}

// untgz unpacks regular files of a .tgz under dst, refusing names that leave it.
func untgz(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || strings.HasPrefix(name, "..") {
			return fmt.Errorf("entry %q leaves the folder", h.Name)
		}
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		w, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, tr); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
}
