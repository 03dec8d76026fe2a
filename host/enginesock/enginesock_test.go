package enginesock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func serveWhoami(t *testing.T, path string) {
	t.Helper()
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ConnContext: ConnContext, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PeerFrom(r.Context())
		if !ok {
			http.Error(w, "no peer", http.StatusForbidden)
			return
		}
		io.WriteString(w, strconv.Itoa(p.UID)+" "+strconv.Itoa(p.PID))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// The engine's user (here: this process's) listens in its own folder; a client sees who
// answers, and the server sees who asked.
func TestListenDialPeers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engine.sock")
	serveWhoami(t, path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	var got Info
	c := Client(path, 5*time.Second, func(i Info) { got = i })
	resp, err := c.Get("http://engine/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := strconv.Itoa(os.Geteuid()) + " " + strconv.Itoa(os.Getpid())
	if string(b) != want {
		t.Fatalf("the server saw %q, want %q", b, want)
	}
	if got.UID != os.Geteuid() || got.PID != os.Getpid() || !got.SharedUser {
		t.Fatalf("Dial found %+v: want this process, flagged as sharing the caller's user", got)
	}
	// A second engine on the same path is refused while the first answers.
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "another engine") {
		t.Fatalf("second Listen: %v", err)
	}
}

// A folder others can write is refused on both ends: anyone could have bound the path.
func TestOpenFolderRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "engine.sock")
	if _, err := Listen(path); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Listen in a 0777 folder: %v", err)
	}
	os.Chmod(dir, 0o700)
	serveWhoami(t, path)
	os.Chmod(dir, 0o777)
	if _, _, err := Dial(context.Background(), path); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Dial in a 0777 folder: %v", err)
	}
	os.Chmod(dir, 0o700)
}

// A socket file that is not the folder owner's, or a plain file, is not the engine's.
func TestNotASocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engine.sock")
	os.WriteFile(path, []byte("x"), 0o600)
	if _, _, err := Dial(context.Background(), path); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Dial a plain file: %v", err)
	}
	if _, err := Listen(path); err == nil {
		t.Fatal("Listen over a plain file")
	}
	if _, err := Listen("rel/engine.sock"); err == nil {
		t.Fatal("Listen on a relative path")
	}
}

// A stale socket (nobody answers) is replaced.
func TestStaleSocketReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engine.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket gone before the test: %v", err)
	}
	serveWhoami(t, path)
	if _, _, err := Dial(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}
