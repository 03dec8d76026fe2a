package audit_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/internal/testenv"
)

// crashChild, run as a subprocess, records events while NATS is down (each goes to
// disk before Record returns) and dies without Close.
func crashChild(t *testing.T) {
	url, dir := os.Getenv("AUDIT_CRASH_URL"), os.Getenv("AUDIT_CRASH_DIR")
	n, _ := strconv.Atoi(os.Getenv("AUDIT_CRASH_N"))
	nc := connect(t, url)
	p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if nc.IsConnected() {
		t.Fatalf("the down server at %s answered (%s)", url, nc.ConnectedUrl())
	}
	// No wait for Stats().Spooling: with an empty spool the worker leaves spooling mode at once
	// (nothing to replay), so that flag may never be seen; Record itself writes to disk while
	// NATS is down, which the Spooled count below checks.
	for i := 0; i < n; i++ {
		p.Record(context.Background(), decision(i))
	}
	if st := p.Stats(); st.Spooled != int64(n) {
		t.Fatalf("spooled %d of %d", st.Spooled, n)
	}
	os.Exit(3) // crash: no Close, no flush
}

// A process that dies while NATS is down loses nothing it spooled: the next
// publisher on the same spool replays it all, once, in order.
func TestCrashWhileDownThenReplay(t *testing.T) {
	if os.Getenv("AUDIT_CRASH_CHILD") == "1" {
		crashChild(t)
		return
	}
	// The child's NATS is down: a port this test holds with a listener that closes every
	// connection, so no other test's server can answer there. The replay goes to a live server.
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	go func() {
		for {
			c, err := down.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	const n = 300
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWhileDownThenReplay$")
	cmd.Env = append(os.Environ(), "AUDIT_CRASH_CHILD=1", "AUDIT_CRASH_URL=nats://"+down.Addr().String(), "AUDIT_CRASH_DIR="+dir, "AUDIT_CRASH_N="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child did not crash as planned: %v\n%s", err, out)
	}
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	testenv.Eventually(t, waitLimit, "connect", nc.IsConnected)
	p := newPublisher(t, nc, dir)
	if st := p.Stats(); st.Pending != n && st.Published == 0 {
		t.Fatalf("new publisher sees %d pending, want %d", st.Pending, n)
	}
	flush(t, p)
	checkExactlyOnceInOrder(t, readStream(t, nc), n)
}

func TestSpoolLockedByAnotherPublisher(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	newPublisher(t, nc, dir)
	if _, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: dir}); !errors.Is(err, audit.ErrSpoolLocked) {
		t.Fatalf("second publisher on one spool: err = %v, want ErrSpoolLocked", err)
	}
}
