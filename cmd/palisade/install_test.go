package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --dry-run says every step and changes nothing; a relative path and an unsigned bundle without
// --allow-unsigned are refused before anything is done.
func TestInstallDryRun(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	code, out, errs := runCLI(t, "", "install", "--dry-run", "--user", "palisade-dry-run-nobody", "--data-dir", data,
		"--config-dir", filepath.Join(root, "etc"), "--socket-dir", filepath.Join(root, "run"), "--unit-dir", filepath.Join(root, "units"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"useradd --system", "folder " + data + " (mode 0700", "(mode 0755", "systemd unit", "engine.sock"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("dry run created %s", data)
	}
	if code, _, errs := runCLI(t, "", "install", "--dry-run", "--data-dir", "rel"); code == 0 || !strings.Contains(errs, `--data-dir "rel" is not an absolute path`) {
		t.Errorf("relative data dir: exit %d: %s", code, errs)
	}
	unsigned := agentsBundle(t, "")
	if code, _, errs := runCLI(t, "", "install", "--dry-run", "--bundle", unsigned); code == 0 || !strings.Contains(errs, "is unsigned") || !strings.Contains(errs, unsigned) {
		t.Errorf("unsigned bundle: exit %d: %s", code, errs)
	}
}

// The unit palisade install writes is deploy/palisade.service with the install's paths.
func TestInstallUnit(t *testing.T) {
	c := &installCmd{User: "eng", Bin: "/opt/p/palisade", ConfigDir: "/opt/p/etc", DataDir: "/srv/p"}
	u := c.unit("/run/p/engine.sock")
	for _, want := range []string{"User=eng", "Group=eng", "ExecStart=/opt/p/palisade serve --config /opt/p/etc/palisade.yaml --socket /run/p/engine.sock", "ReadWritePaths=/srv/p", "RuntimeDirectoryMode=0755"} {
		if !strings.Contains(u, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
}

// serve says plainly when the engine runs as a login user (as `make run` does): an agent as
// that user can read its keys. A system user palisade install made has no login shell.
func TestLoginUser(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\npalisade:x:994:994::/var/lib/palisade:/usr/sbin/nologin\nsvc:x:995:995::/:/bin/false\n"), 0o644)
	for _, tc := range []struct {
		uid   int
		name  string
		login bool
	}{{0, "root", true}, {994, "palisade", false}, {995, "svc", false}, {1234, "", false}} {
		if name, login := loginUser(passwd, tc.uid); name != tc.name || login != tc.login {
			t.Errorf("uid %d: %q %v, want %q %v", tc.uid, name, login, tc.name, tc.login)
		}
	}
}
