package gateway

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/wrap"
	"github.com/added060/palisade/sdk/go/abi"
)

// SelfPaths says where this engine's own files are, for the envelope's `engine` field (ABI
// 1.1), from the config and what the process knows: the data dir (NATS keys under nats-auth,
// audit spool, pins, the gateway's bundle copies), the NATS creds files, the bundle folder and
// the pattern of its staged copies, the plugin cache, the config file, the trusted bundle keys,
// the running binary, Claude Code's user and managed settings (where `hook install` puts the
// hook), the MCP client configs `wrap` rewrites (wrap.KnownPaths for the process's working
// directory) and extra (the hook's socket folder, which only cmd knows). Each path is absolute
// and cleaned; a symlinked one is listed as itself and as its target, so naming either is
// caught.
func SelfPaths(cfg config.Config, trustedKeys []string, extra []string) *abi.Engine {
	e := &abi.Engine{}
	add := func(p string) {
		if p == "" {
			return
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return
		}
		for _, q := range []string{abs, evalSymlinks(abs)} {
			if q != "" && q != string(filepath.Separator) && !slices.Contains(e.Paths, q) {
				e.Paths = append(e.Paths, q)
			}
		}
	}
	add(cfg.DataDir)
	if cfg.Socket != "" {
		add(filepath.Dir(cfg.Socket)) // the engine socket's folder
	}
	add(filepath.Join(cfg.DataDir, "nats-auth")) // inside the data dir; named for the reader
	add(cfg.NATS.Creds)
	add(cfg.NATS.ApproverCreds)
	if cfg.Bundle != "" && localSource(cfg.Bundle) {
		add(cfg.Bundle)
	}
	// The one-process modes' ephemeral bundle manager stages its copy in the temp dir (serve's is in
	// the data dir).
	e.Paths = append(e.Paths, filepath.Join(os.TempDir(), ".staging-*"))
	add(cfg.Plugins.CacheDir)
	add(cfg.Path)
	for _, k := range trustedKeys {
		if st, err := os.Stat(k); err == nil && !st.IsDir() {
			add(k)
		}
	}
	if exe, err := os.Executable(); err == nil {
		e.Binary = exe
		add(exe)
	}
	if home, err := os.UserHomeDir(); err == nil {
		e.Home = home
		add(filepath.Join(home, ".claude", "settings.json"))
		add(filepath.Join(home, ".claude", "settings.local.json"))
		cwd, _ := os.Getwd()
		for _, p := range wrap.KnownPaths(home, cwd) {
			add(p)
		}
		if cwd != "" {
			for _, p := range engine.ClaudeProjectFiles(cwd) {
				add(p)
			}
		}
	}
	switch runtime.GOOS {
	case "darwin":
		add("/Library/Application Support/ClaudeCode/managed-settings.json")
	case "linux":
		add("/etc/claude-code/managed-settings.json")
	}
	for _, p := range extra {
		add(p)
	}
	// The process deciding: a signal to it stops the guard, and its /proc folder holds its
	// memory, environment and open files (the keys it read).
	pid := os.Getpid()
	e.Pids = append(e.Pids, pid)
	if runtime.GOOS == "linux" {
		e.Paths = append(e.Paths, "/proc/"+strconv.Itoa(pid))
	}
	return e
}

// evalSymlinks is filepath.EvalSymlinks of p, or of its nearest existing parent with the rest
// appended (a file the engine has not written yet); "" when it is p itself.
func evalSymlinks(p string) string {
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			r = filepath.Join(r, rest)
			if r == p {
				return ""
			}
			return r
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
