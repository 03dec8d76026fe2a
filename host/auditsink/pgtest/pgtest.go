// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb in a fresh directory,
// pg_ctl start on a unix socket in that directory, pg_ctl stop when the test ends. It lives
// outside host/internal so that cmd/palisade's tests can use it too.
//
// Missing PostgreSQL binaries fail the test (install them with `make setup`); they are never a
// reason to skip. As root (CI, containers) the cluster runs as the system user palisade-pgtest,
// created on first use, because postgres refuses to run as root.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// User is the system user the cluster runs as when the test runs as root.
const User = "palisade-pgtest"

// Cluster is one running (or stopped) PostgreSQL cluster.
type Cluster struct {
	t    testing.TB
	bin  string // directory holding initdb, pg_ctl
	dir  string // owns data/, the socket and the log
	port int
	as   []string // command prefix that drops to User, or nil

	mu      sync.Mutex
	running bool
}

// Start initialises a cluster in a new directory and starts it; it is stopped and removed when
// the test ends. Superuser "postgres", trust authentication, unix socket only (no TCP port
// that another test could take), database "postgres".
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin, err := FindBin()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	c := &Cluster{t: t, bin: bin}
	if os.Geteuid() == 0 {
		uid, gid, err := ensureUser()
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		// t.TempDir's parents are 0700 root: the cluster gets its own directory under the
		// system temp dir, owned by the user.
		dir, err := os.MkdirTemp("", "pgtest-")
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("pgtest: chown %s: %v", dir, err)
		}
		c.dir = dir
		c.as = []string{"setpriv", "--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(gid), "--init-groups", "--"}
	} else {
		c.dir = t.TempDir()
	}
	if err := os.Chmod(c.dir, 0o700); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	c.port = freePort()
	if out, err := c.command("initdb", "-D", c.DataDir(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf("listen_addresses = ''\nunix_socket_directories = '%s'\nport = %d\nmax_connections = 50\nshared_buffers = 64MB\nlog_min_messages = warning\n", c.dir, c.port)
	f, err := os.OpenFile(filepath.Join(c.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		f.Close()
	}
	if err != nil {
		t.Fatalf("pgtest: postgresql.conf: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	c.Start()
	return c
}

// DataDir is the cluster's data directory.
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }

// DSN connects to database postgres as postgres over the unix socket.
func (c *Cluster) DSN() string { return c.DSNFor("postgres") }

// DSNFor connects to database db.
func (c *Cluster) DSNFor(db string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", c.dir, c.port, db)
}

// Start starts a stopped cluster and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return
	}
	if out, err := c.command("pg_ctl", "-D", c.DataDir(), "-l", c.logPath(), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		c.t.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, c.log())
	}
	c.running = true
}

// Stop stops the cluster (fast shutdown: open sessions are ended, committed data is kept).
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return
	}
	if out, err := c.command("pg_ctl", "-D", c.DataDir(), "-m", "fast", "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		c.t.Errorf("pgtest: pg_ctl stop: %v\n%s", err, out)
		return
	}
	c.running = false
}

// Restart is pg_ctl restart -m fast: every connection is cut, and the server is back when it
// returns.
func (c *Cluster) Restart() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if out, err := c.command("pg_ctl", "-D", c.DataDir(), "-l", c.logPath(), "-m", "fast", "-w", "-t", "60", "restart").CombinedOutput(); err != nil {
		c.t.Fatalf("pgtest: pg_ctl restart: %v\n%s\n%s", err, out, c.log())
	}
	c.running = true
}

// Psql runs one SQL command with psql and returns its unaligned output.
func (c *Cluster) Psql(sql string) (string, error) {
	out, err := c.command("psql", "-X", "-q", "-A", "-t", "-h", c.dir, "-p", strconv.Itoa(c.port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (c *Cluster) logPath() string { return filepath.Join(c.dir, "postgres.log") }

func (c *Cluster) log() string {
	b, _ := os.ReadFile(c.logPath())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string(nil), c.as...), filepath.Join(c.bin, name)), args...)
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	return cmd
}

// FindBin returns the directory of initdb and pg_ctl: the newest /usr/lib/postgresql/*/bin,
// else wherever PATH has them. Its error says how to install them.
func FindBin() (string, error) { return findBin("/usr/lib/postgresql/*/bin") }

// findBin is FindBin with the versioned directories' glob.
func findBin(glob string) (string, error) {
	dirs, _ := filepath.Glob(glob)
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin or PATH: " +
		"run `make setup` (apt-get install postgresql) or put them on PATH")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

var userMu sync.Mutex

// ensureUser creates the system user User when it is missing and returns its ids.
func ensureUser() (uid, gid int, err error) {
	userMu.Lock()
	defer userMu.Unlock()
	u, err := user.Lookup(User)
	if err != nil {
		out, aerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", User).CombinedOutput()
		if u, err = user.Lookup(User); err != nil { // another test binary may have won the race
			return 0, 0, fmt.Errorf("create user %s to run postgres as (it refuses root): %v %s", User, aerr, out)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// freePort is a port number for the socket's name; the cluster listens on no TCP port.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 5432 + int(time.Now().UnixNano()%1000)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
