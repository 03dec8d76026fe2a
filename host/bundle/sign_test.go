package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
)

func miniBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"bundle.yaml":      "name: m\nversion: \"1\"\ncoverage: {uncovered: pass}\nstages:\n  - name: s\n    plugin: p.wasm\n",
		"p.wasm":           "\x00asm",
		"data/rules.yaml":  "rules: []\n",
		"fixtures/a.json":  `{"method":"tools/call"}`,
		"data/nested/x.md": "x",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestKeysRoundTrip(t *testing.T) {
	pub, priv, err := bundle.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pubPath, err := bundle.WriteKeyPair(filepath.Join(dir, "k"), priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.WriteKeyPair(filepath.Join(dir, "k"), priv); err == nil {
		t.Fatal("overwrote an existing key")
	}
	if st, _ := os.Stat(filepath.Join(dir, "k")); st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v", st.Mode().Perm())
	}
	got, err := bundle.ReadPrivateKey(filepath.Join(dir, "k"))
	if err != nil || !got.Equal(priv) {
		t.Fatalf("read private key: %v", err)
	}
	ks, err := bundle.LoadKeys([]string{pubPath, bundle.EncodePublicKey(pub)})
	if err != nil || len(ks) != 1 || !ks[bundle.KeyID(pub)].Equal(pub) {
		t.Fatalf("LoadKeys: %v %v", ks, err)
	}
	for _, bad := range []string{"nope", bundle.EncodePrivateKey(priv), "palisade-ed25519-pub AAAA"} {
		if _, err := bundle.LoadKeys([]string{bad}); err == nil {
			t.Errorf("LoadKeys(%q) accepted", bad)
		}
	}
}

func TestSignVerify(t *testing.T) {
	dir := miniBundle(t)
	pub, priv, _ := bundle.GenerateKey()
	keys := bundle.KeySet{bundle.KeyID(pub): pub}
	if _, _, err := bundle.Verify(dir, keys); !errors.Is(err, bundle.ErrUnsigned) {
		t.Fatalf("unsigned: %v", err)
	}
	sig, err := bundle.Sign(dir, priv)
	if err != nil || sig.Name != "m" || !strings.HasPrefix(sig.Digest, "sha256:") {
		t.Fatalf("sign: %+v %v", sig, err)
	}
	if _, d, err := bundle.Verify(dir, keys); err != nil || "sha256:"+d != sig.Digest {
		t.Fatalf("verify: %v", err)
	}
	if _, _, err := bundle.Verify(dir, bundle.KeySet{}); !errors.Is(err, bundle.ErrUntrustedKey) {
		t.Fatalf("no keys: %v", err)
	}
	// Every file counts, in any folder; only the root signature.json does not.
	for _, name := range []string{"data/nested/x.md", "fixtures/a.json", "bundle.yaml"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			orig, _ := os.ReadFile(p)
			defer os.WriteFile(p, orig, 0o644)
			os.WriteFile(p, append(orig, ' '), 0o644)
			if _, _, err := bundle.Verify(dir, keys); !errors.Is(err, bundle.ErrDigestMismatch) {
				t.Fatalf("changed %s: %v", name, err)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "x.sig"), []byte("not excluded"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.Verify(dir, keys); !errors.Is(err, bundle.ErrDigestMismatch) {
		t.Fatalf("added data/x.sig: %v", err)
	}
	os.Remove(filepath.Join(dir, "data", "x.sig"))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "data", "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.Verify(dir, keys); !errors.Is(err, bundle.ErrIrregularFile) {
		t.Fatalf("symlink: %v", err)
	}
}

func TestPackDeterministicAndUnpack(t *testing.T) {
	dir := miniBundle(t)
	var a, b bytes.Buffer
	if err := bundle.Pack(dir, &a); err != nil {
		t.Fatal(err)
	}
	// Touch every file: times must not change the archive.
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error {
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b, 0o600)
		return nil
	})
	if err := bundle.Pack(dir, &b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("packing the same bundle twice gave different bytes")
	}
	out := filepath.Join(t.TempDir(), "u")
	if err := bundle.Unpack(bytes.NewReader(a.Bytes()), out); err != nil {
		t.Fatal(err)
	}
	d1, _ := bundle.Digest(dir)
	d2, _ := bundle.Digest(out)
	if d1 != d2 {
		t.Fatal("unpacked digest differs")
	}
}

func tarGz(t testing.TB, entries []tar.Header, body string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestUnpackRefuses(t *testing.T) {
	reg := func(n string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644} }
	for _, tc := range []struct {
		name    string
		entries []tar.Header
	}{
		{"parent path", []tar.Header{reg("bundle.yaml"), reg("../evil")}},
		{"absolute path", []tar.Header{reg("bundle.yaml"), reg("/etc/evil")}},
		{"unclean path", []tar.Header{reg("bundle.yaml"), reg("a/../../evil")}},
		{"symlink", []tar.Header{reg("bundle.yaml"), {Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}},
		{"hard link", []tar.Header{reg("bundle.yaml"), {Name: "l", Typeflag: tar.TypeLink, Linkname: "bundle.yaml"}}},
		{"repeated file", []tar.Header{reg("bundle.yaml"), reg("bundle.yaml")}},
		{"no manifest", []tar.Header{reg("x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "d")
			err := bundle.Unpack(bytes.NewReader(tarGz(t, tc.entries, "x")), dst)
			if !errors.Is(err, bundle.ErrBadArchive) {
				t.Fatalf("err = %v, want ErrBadArchive", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "evil")); err == nil {
				t.Fatal("wrote outside the destination")
			}
		})
	}
}

// FuzzUnpack: Unpack never panics and never writes outside its folder.
func FuzzUnpack(f *testing.F) {
	f.Add(tarGz(f, []tar.Header{{Name: "bundle.yaml", Typeflag: tar.TypeReg}}, "name: x"))
	f.Add(tarGz(f, []tar.Header{{Name: "../x", Typeflag: tar.TypeReg}}, "x"))
	f.Add([]byte("\x1f\x8b garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		dst := filepath.Join(root, "d")
		_ = bundle.Unpack(bytes.NewReader(b), dst)
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.Name() != "d" {
				t.Fatalf("Unpack wrote %s outside its folder", e.Name())
			}
		}
	})
}
