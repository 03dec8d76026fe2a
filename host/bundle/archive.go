package bundle

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Archive limits: an archive over them is refused before it fills a disk.
const (
	MaxArchiveBytes = 512 << 20 // total uncompressed bytes
	MaxArchiveFiles = 10000
)

// ErrBadArchive is returned by Unpack for an archive that is corrupt, over the limits, or names
// a path outside the bundle, a link or a device.
var ErrBadArchive = errors.New("bundle: bad archive")

// Pack writes dir (signature.json included) to w as a gzipped tar. The output depends only on
// the files' paths and contents: entries are sorted, times zeroed, modes normalized, so the same
// bundle packs to the same bytes.
func Pack(dir string, w io.Writer) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w", rel, ErrIrregularFile)
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return fmt.Errorf("bundle pack: %w", err)
	}
	if !containsString(files, ManifestFile) {
		return fmt.Errorf("bundle pack: %s: no %s", dir, ManifestFile)
	}
	sort.Strings(files)
	gz, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("bundle pack: %w", err)
		}
		hdr := &tar.Header{Name: rel, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("bundle pack: %w", err)
		}
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("bundle pack: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("bundle pack: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("bundle pack: %w", err)
	}
	return nil
}

// PackFile packs dir into the file out (written to a temporary name, then renamed).
func PackFile(dir, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".bundle-*.tar.gz")
	if err != nil {
		return fmt.Errorf("bundle pack: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := Pack(dir, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bundle pack: %w", err)
	}
	return os.Rename(tmp.Name(), out)
}

// Unpack extracts a gzipped tar made by Pack into dir (which must be empty or absent). Only
// regular files and folders are accepted, each path must stay inside dir, and the archive must
// hold bundle.yaml at its root.
func Unpack(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bundle unpack: %w", err)
	}
	tr := tar.NewReader(gz)
	var total int64
	n := 0
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		name, err := cleanEntry(hdr.Name)
		if err != nil {
			return err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if name != "" {
				if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(name)), 0o755); err != nil {
					return fmt.Errorf("bundle unpack: %w", err)
				}
			}
			continue
		case tar.TypeReg:
		default:
			return fmt.Errorf("%w: %s: entry type %q is not a regular file", ErrBadArchive, hdr.Name, hdr.Typeflag)
		}
		if name == "" || seen[name] {
			return fmt.Errorf("%w: %q is empty or repeated", ErrBadArchive, hdr.Name)
		}
		seen[name] = true
		if n++; n > MaxArchiveFiles {
			return fmt.Errorf("%w: more than %d files", ErrBadArchive, MaxArchiveFiles)
		}
		if hdr.Size < 0 || total+hdr.Size > MaxArchiveBytes {
			return fmt.Errorf("%w: more than %d bytes", ErrBadArchive, MaxArchiveBytes)
		}
		total += hdr.Size
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("bundle unpack: %w", err)
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("bundle unpack: %w", err)
		}
		_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadArchive, name, err)
		}
	}
	if !seen[ManifestFile] {
		return fmt.Errorf("%w: no %s at the root", ErrBadArchive, ManifestFile)
	}
	return nil
}

// UnpackFile extracts the archive file src into dir.
func UnpackFile(src, dir string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("bundle unpack: %w", err)
	}
	defer f.Close()
	return Unpack(f, dir)
}

// IsArchive reports whether path names an archive (by extension) rather than a folder.
func IsArchive(p string) bool {
	return strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz")
}

func cleanEntry(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	if n == "" || n == "." {
		return "", nil
	}
	if strings.Contains(n, "\\") || strings.HasPrefix(n, "/") {
		return "", fmt.Errorf("%w: path %q", ErrBadArchive, name)
	}
	c := path.Clean(n)
	if c == ".." || strings.HasPrefix(c, "../") || c != strings.TrimSuffix(n, "/") {
		return "", fmt.Errorf("%w: path %q leaves the bundle or is not clean", ErrBadArchive, name)
	}
	return c, nil
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
