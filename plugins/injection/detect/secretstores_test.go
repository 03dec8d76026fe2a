package detect

import (
	"strings"
	"testing"
)

// TestSecretStoreCatalogue: every entry says its class and where the tool documents it, and
// each store is denied at the root, one site folder down and under a home folder, with a file
// below it where it is a folder: a catalogue entry no rule reads would be dead weight.
func TestSecretStoreCatalogue(t *testing.T) {
	e := NewEvaluator(Config{})
	seen := map[string]bool{}
	for _, s := range secretStores {
		if s.class == "" || s.doc == "" {
			t.Errorf("%q: class %q, doc %q: both are needed", s.path, s.class, s.doc)
		}
		if s.path != strings.ToLower(s.path) || strings.HasPrefix(s.path, "/") {
			t.Errorf("%q: a store is lower case and relative to the home folder", s.path)
		}
		if seen[s.path] {
			t.Errorf("%q listed twice", s.path)
		}
		seen[s.path] = true
		rel := s.path
		if strings.HasSuffix(rel, "/") {
			rel += "x"
		}
		paths := []string{"~/" + rel, "/home/alice/" + rel, "/root/" + rel}
		if !projectPath("/" + rel) {
			// .config/git/credentials reads as a checkout's (a /git/ folder) outside a home.
			paths = append(paths, "/"+rel, "/backup/"+rel)
		}
		for _, p := range paths {
			wantRead(t, e, p, "deny")
		}
	}
}

// TestSecretStorePaths (det72): the catalogue's stores where a scanner's word list asks for
// them (the root, one site folder down), a store's folder named on its own, and a backup copy
// of a secret file are denied; a project's own metadata folders, a template, an operating
// system's folder of the same name and the det60–det66 neighbours pass.
func TestSecretStorePaths(t *testing.T) {
	wantReadRows(t, []string{
		// a store's folder named on its own, at the root or one site folder down
		"deny /.aws",
		"deny /.azure/",
		"deny /.kube",
		"deny /.docker",
		"deny /admin/.ssh",
		"deny /backup/.gnupg/",
		"deny /.git",
		"deny /.config/gcloud",
		"deny /.mozilla/firefox/abcd.default-release/logins.json",
		"deny /.cargo/credentials.toml",
		"deny /.config/containers/auth.json",
		"deny /.m2/settings-security.xml",
		"deny /.htdigest",
		"deny /.anydesk/service.conf",
		"deny ~/.config/op/config",
		"deny /.envrc",
		"deny /sftp-config.json",
		"deny /admin/.ftpconfig",
		"deny /.fetchmailrc",
		"deny /.dbshell",
		"deny /etc/ssh/ssh_host_ed25519_key",
		"deny /srv/backup/ssh_host_rsa_key",
		// a backup copy of a secret file
		"deny /.boto~",
		"deny /.s3cfg~",
		"deny /.env~",
		"deny /server.key~",
		"deny /master.key~",
		"deny /.htdigest.bak",
		"deny /etc/shadow.old",
		"deny /.ssh/id_ed25519.orig",
		// benign neighbours: a project's own folders and files, templates, system folders
		"none /workspace/app/.docker/Dockerfile",
		"none .docker/compose.yml",
		"none /home/dev/src/app/.m2/settings.xml",
		"none /usr/share/doc/docker.io/README.Debian",
		"none /home/dev/src/app/.env.example",
		"none /home/dev/src/app/config.yaml",
		"none /home/dev/src/app/.github/workflows/ci.yml",
		"none /home/dev/src/app/.dockerignore",
		"none /app/.gitignore",
		"none /app/.docker-compose.yml",
		"none /.config/",
		"none /home/dev/src/app/.gitlab-ci.yml.orig",
		"none /home/dev/src/app/main.go~",
		"none /home/dev/src/app/README.md.orig",
		"none /.dockerenv",
		"none deploy/keys/ssh_host_ed25519_key.pub",
		"none /home/dev/src/app/sftp-config.json.example",
		"none /config.json",
		"none /usr/share/doc/fetchmail/examples/fetchmailrc",
		"none /site/history/1999/",
	})
}

func TestBackupStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/.env~", "/.env"},
		{"/etc/shadow.bak", "/etc/shadow"},
		{"/x.key.old", "/x.key"},
		{"/readme", ""},
		{"~", ""},
		{".1", ""},
		{"see ~/.ssh/config, version 1.1", ""},
		{"cp .env .env~", ""},
	} {
		if got := backupStem(tc.in); got != tc.want {
			t.Errorf("backupStem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
