package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/added060/palisade/deploy"
	"github.com/added060/palisade/host/bundle"
)

func init() {
	register(command{name: "install", summary: "run the engine as its own system user: user, private data dir, socket dir, config, systemd unit (root)", cmd: &installCmd{}})
}

// installCmd is `palisade install`: the engine (palisade serve) as a system service under its
// own user, so the agent it guards — another user — can read none of its keys, write none of
// its files and bind none of its sockets (docs/DESIGN.md "The process boundary").
type installCmd struct {
	User          string   `default:"palisade" help:"The engine's system user (created when missing)."`
	DataDir       string   `name:"data-dir" default:"/var/lib/palisade" help:"State: keys, NATS store, audit spool (0700, the engine's user)."`
	ConfigDir     string   `name:"config-dir" default:"/etc/palisade" help:"palisade.yaml and the bundle (root's, readable by the engine's user)."`
	SocketDir     string   `name:"socket-dir" default:"/run/palisade" help:"The engine socket's folder (0755, the engine's user): only it can create files there."`
	UnitDir       string   `name:"unit-dir" default:"/etc/systemd/system" help:"Where the systemd unit goes (\"\" = no unit)."`
	Bin           string   `default:"/usr/local/bin/palisade" help:"Where this binary is installed."`
	Bundle        string   `help:"Policy bundle folder, copied to CONFIG_DIR/bundle." placeholder:"DIR"`
	TrustKey      []string `name:"trust-key" help:"Public key the bundle must be signed with (copied to CONFIG_DIR/keys)." placeholder:"FILE.pub"`
	AllowUnsigned bool     `name:"allow-unsigned" help:"Let an unsigned bundle load (whoever can write CONFIG_DIR/bundle sets the policy: root)."`
	DryRun        bool     `name:"dry-run" help:"Say what would be done; change nothing."`
}

func (c *installCmd) Run(ctx context.Context, env *cliEnv) error {
	if !c.DryRun && os.Geteuid() != 0 {
		fmt.Fprintln(env.Stderr, "palisade install: run as root (it creates a system user and folders only that user can write); --dry-run shows the steps")
		return exitCode(exitUsage)
	}
	// The bundle is copied once, privately, and the copy is what is checked and installed: a
	// folder the agent can write cannot change between the check and the copy.
	var staged string
	if c.Bundle != "" {
		var err error
		if staged, err = bundle.Stage(c.Bundle, ""); err != nil {
			fmt.Fprintln(env.Stderr, "palisade install: bundle:", err)
			return exitCode(exitUsage)
		}
		defer os.RemoveAll(staged)
		if _, _, err := installTrust(staged, c.TrustKey, c.AllowUnsigned); err != nil {
			fmt.Fprintln(env.Stderr, "palisade install:", strings.ReplaceAll(err.Error(), staged, c.Bundle))
			return exitCode(exitUsage)
		}
	}
	for _, p := range []struct{ name, v string }{{"--data-dir", c.DataDir}, {"--config-dir", c.ConfigDir}, {"--socket-dir", c.SocketDir}, {"--bin", c.Bin}} {
		if !filepath.IsAbs(p.v) {
			fmt.Fprintf(env.Stderr, "palisade install: %s %q is not an absolute path\n", p.name, p.v)
			return exitCode(exitUsage)
		}
	}
	step := func(format string, a ...any) { fmt.Fprintf(env.Stdout, "palisade install: "+format+"\n", a...) }
	if c.DryRun {
		step("(dry run: nothing is changed)")
	}
	do := func(err error) error {
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade install:", err)
			return exitCode(exitFail)
		}
		return nil
	}
	uid, gid, err := c.ensureUser(step)
	if err := do(err); err != nil {
		return err
	}
	sock := filepath.Join(c.SocketDir, "engine.sock")
	dirs := []struct {
		path     string
		mode     os.FileMode
		uid, gid int
	}{
		{c.DataDir, 0o700, uid, gid},   // keys, bus identities, audit spool: the engine's alone
		{c.SocketDir, 0o755, uid, gid}, // only the engine creates files; everyone reaches the socket
		{c.ConfigDir, 0o755, 0, 0},     // root's: the engine reads, nobody else writes
	}
	for _, d := range dirs {
		step("folder %s (mode %04o, uid %d)", d.path, d.mode, d.uid)
		if !c.DryRun {
			if err := do(ownedDir(d.path, d.mode, d.uid, d.gid)); err != nil {
				return err
			}
		}
	}
	cfg := []string{
		"# Written by palisade install. The engine: palisade serve as user " + c.User + ".",
		"listen: 127.0.0.1:8420",
		"data_dir: " + c.DataDir,
		"socket: " + sock,
	}
	if c.Bundle != "" {
		dst := filepath.Join(c.ConfigDir, "bundle")
		step("bundle %s → %s (root's, read-only for the engine)", c.Bundle, dst)
		cfg = append(cfg, "bundle: "+dst, "bundles:")
		if !c.DryRun {
			if err := do(replaceTree(staged, dst)); err != nil {
				return err
			}
		}
		var keys []string
		for i, k := range c.TrustKey {
			kd := filepath.Join(c.ConfigDir, "keys", fmt.Sprintf("trusted-%d.pub", i))
			keys = append(keys, kd)
			step("trusted key %s → %s", k, kd)
			if !c.DryRun {
				if err := do(copyFileMode(k, kd, 0o644)); err != nil {
					return err
				}
			}
		}
		cfg = append(cfg, "  trusted_keys: ["+strings.Join(keys, ", ")+"]", "  allow_unsigned: "+strconv.FormatBool(c.AllowUnsigned))
	}
	conf := filepath.Join(c.ConfigDir, "palisade.yaml")
	if _, err := os.Stat(conf); err == nil {
		step("config %s exists: kept (it must set socket: %s for hooks to reach the engine)", conf, sock)
	} else {
		step("config %s", conf)
		if !c.DryRun {
			if err := do(writeFileOwned(conf, []byte(strings.Join(cfg, "\n")+"\n"), 0o640, 0, gid)); err != nil {
				return err
			}
		}
	}
	if self, err := os.Executable(); err == nil && !sameFile(self, c.Bin) {
		step("binary %s → %s", self, c.Bin)
		if !c.DryRun {
			if err := do(copyFileMode(self, c.Bin, 0o755)); err != nil {
				return err
			}
		}
	}
	if c.UnitDir != "" {
		unit := filepath.Join(c.UnitDir, "palisade.service")
		step("systemd unit %s", unit)
		if !c.DryRun {
			if err := do(os.WriteFile(unit, []byte(c.unit(sock)), 0o644)); err != nil {
				return err
			}
		}
		step("next: systemctl daemon-reload && systemctl enable --now palisade")
	} else {
		step("next: start the engine as %s: palisade serve --config %s --socket %s", c.User, conf, sock)
	}
	step("agents' hooks ask the engine on %s (palisade hook --engine-socket, the default); the agent's user reads none of %s", sock, c.DataDir)
	return nil
}

// unit is deploy/palisade.service with this install's user and paths.
func (c *installCmd) unit(sock string) string {
	r := strings.NewReplacer(
		"User=palisade", "User="+c.User,
		"Group=palisade", "Group="+c.User,
		"/usr/local/bin/palisade", c.Bin,
		"/etc/palisade/palisade.yaml", filepath.Join(c.ConfigDir, "palisade.yaml"),
		"/var/lib/palisade", c.DataDir,
		"/run/palisade/engine.sock", sock,
	)
	return r.Replace(deploy.Unit)
}

// ensureUser creates the engine's system user and group when missing and returns their ids.
func (c *installCmd) ensureUser(step func(string, ...any)) (int, int, error) {
	u, err := user.Lookup(c.User)
	if err == nil {
		step("user %s exists (uid %s)", c.User, u.Uid)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			return 0, 0, fmt.Errorf("user %s is root: the engine needs a user of its own", c.User)
		}
		return uid, gid, nil
	}
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		return 0, 0, err
	}
	shell := "/usr/sbin/nologin"
	if _, err := os.Stat(shell); err != nil {
		shell = "/bin/false"
	}
	step("user %s: useradd --system --user-group --home-dir %s --no-create-home --shell %s", c.User, c.DataDir, shell)
	if c.DryRun {
		return -1, -1, nil
	}
	if out, err := exec.Command("useradd", "--system", "--user-group", "--home-dir", c.DataDir, "--no-create-home", "--shell", shell, c.User).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("useradd %s: %v: %s", c.User, err, strings.TrimSpace(string(out)))
	}
	if u, err = user.Lookup(c.User); err != nil {
		return 0, 0, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// ownedDir makes path a folder with mode and owner, fixing an existing one.
func ownedDir(path string, mode os.FileMode, uid, gid int) error {
	if err := os.MkdirAll(path, mode); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", path)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

func writeFileOwned(path string, b []byte, mode os.FileMode, uid, gid int) error {
	if err := os.WriteFile(path, b, mode); err != nil {
		return err
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

func copyFileMode(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".palisade-install"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// replaceTree copies src, a checked private copy of the bundle, to dst (root's files, 0644;
// folders 0755), replacing what was there.
func replaceTree(src, dst string) error {
	staged, err := bundle.Stage(src, filepath.Dir(dst))
	if err != nil {
		return err
	}
	if err := filepath.WalkDir(staged, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	}); err != nil {
		os.RemoveAll(staged)
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		os.RemoveAll(staged)
		return err
	}
	return os.Rename(staged, dst)
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
