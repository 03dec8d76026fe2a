package audit_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/nats-io/nats.go/jetstream"
)

// ackDropper is a TCP proxy in front of a NATS server that can stop passing what the server
// sends (so publishes reach the stream but their acks never come back) and cut every
// connection (so the client reconnects through it).
type ackDropper struct {
	ln     net.Listener
	target string
	drop   atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newAckDropper(t *testing.T, target string) *ackDropper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &ackDropper{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); d.cut() })
	go d.serve()
	return d
}

func (d *ackDropper) url() string { return "nats://" + d.ln.Addr().String() }

func (d *ackDropper) serve() {
	for {
		c, err := d.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", d.target)
		if err != nil {
			c.Close()
			continue
		}
		d.mu.Lock()
		d.conns = append(d.conns, c, s)
		d.mu.Unlock()
		go func() { _, _ = io.Copy(s, c) }()
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 && !d.drop.Load() {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// testSigner signs with a fresh ed25519 key: signed batches are what Options.Linger gathers.
type testSigner struct{ key ed25519.PrivateKey }

func newTestSigner(t *testing.T) *testSigner {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testSigner{key: key}
}

func (s *testSigner) PublicKey() string {
	return hex.EncodeToString(s.key.Public().(ed25519.PublicKey))
}

func (s *testSigner) Sign(data []byte) ([]byte, error) { return ed25519.Sign(s.key, data), nil }

// cut closes every connection made so far.
func (d *ackDropper) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// A live publisher whose acks are lost while the stream stores its events, and whose
// connection comes back only after the stream's de-duplication window: it looks in the stream
// before sending them again and stores each once. The control, without the recheck, stores them
// twice, so the window alone would not have.
func TestLostAcksAfterWindowStoredOnce(t *testing.T) {
	const window = 200 * time.Millisecond
	t.Cleanup(audit.SetMinDuplicates(window))
	for _, tc := range []struct {
		name      string
		recheck   bool
		wantTwice int
	}{
		{"recheck", true, 0},
		{"control: no recheck", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testenv.StartNATS(t)
			proxy := newAckDropper(t, s.Addr().String())
			nc := connect(t, proxy.url())
			// The three events must leave in one batch while acks are dropped: without a linger,
			// a loaded machine's worker sent the first alone, waited out its ack and the rest
			// stayed queued until the connection was found stale minutes later (CI, -race).
			p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: t.TempDir(),
				PublishTimeout: 5 * time.Second, Duplicates: window, Signer: newTestSigner(t), Linger: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			if !tc.recheck {
				audit.DisableRecheck(p)
			}
			p.Record(context.Background(), decision(0))
			flush(t, p)

			proxy.drop.Store(true)
			for i := 1; i <= 3; i++ {
				p.Record(context.Background(), decision(i))
			}
			direct := connect(t, s.ClientURL())
			js, _ := jetstream.New(direct)
			waitStored(t, js, 4)
			time.Sleep(3 * window) // the stream forgets their ids
			proxy.drop.Store(false)
			proxy.cut()
			flush(t, p)

			got := readStream(t, direct)
			perID := map[string]int{}
			for _, e := range got {
				perID[e.msgID]++
			}
			twice := 0
			for id, n := range perID {
				if n == 2 {
					twice++
				} else if n != 1 {
					t.Errorf("event %s stored %d times", id, n)
				}
			}
			if len(perID) != 4 || twice != tc.wantTwice {
				t.Errorf("%d events, %d stored twice; want 4 and %d", len(perID), twice, tc.wantTwice)
			}
			st := p.Stats()
			if tc.recheck && (st.Rechecks < 1 || st.Duplicates != 3 || st.RecheckFailed != 0) {
				t.Errorf("stats %+v, want Rechecks>=1 Duplicates=3", st)
			}
		})
	}
}

// waitStored waits until the audit stream holds n messages.
func waitStored(t *testing.T, js jetstream.JetStream, n uint64) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s, err := js.Stream(ctx, audit.DefaultStream)
		var msgs uint64
		if err == nil {
			if info, err := s.Info(ctx); err == nil {
				msgs = info.State.Msgs
			}
		}
		cancel()
		if msgs >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream holds %d messages, want %d", msgs, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
