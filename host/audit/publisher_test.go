package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const waitLimit = 60 * time.Second

// connect dials url the way bus.Connect does: reconnect forever, and keep
// trying when the server is down at start.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, append(audit.ConnOptions(),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0),
	)...)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func newPublisher(t testing.TB, nc *nats.Conn, dir string) *audit.Publisher {
	t.Helper()
	p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: dir, PublishTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func flush(t testing.TB, p *audit.Publisher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v (stats %+v)", err, p.Stats())
	}
}

type stored struct {
	subject string
	msgID   string
	ev      audit.Event
	n       int
}

// readStream returns every message in the audit stream, in stream order.
func readStream(t testing.TB, nc *nats.Conn) []stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, audit.DefaultStream)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get %d: %v", seq, err)
		}
		var st stored
		st.subject = m.Subject
		st.msgID = m.Header.Get(audit.HeaderMsgID)
		if err := json.Unmarshal(m.Data, &st.ev); err != nil {
			t.Fatalf("seq %d: bad event JSON: %v", seq, err)
		}
		var d struct{ N int }
		_ = json.Unmarshal(st.ev.Detail, &d)
		st.n = d.N
		out = append(out, st)
	}
	return out
}

func decision(n int) audit.Event {
	return audit.Event{
		Kind:   audit.KindDecision,
		Action: "deny", RequestedAction: "ask",
		Server: "fs", Tool: "read_file", Stage: "rules", Rule: "no-secrets",
		Reason: "reads ~/.ssh",
		Stages: []abi.StageResult{{Stage: "rules", Phase: "request", Action: "deny", Score: 1, LatencyUS: 40}},
		Detail: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
	}
}

// checkExactlyOnceInOrder asserts the stream holds events 0..n-1, each
// once, in order, each with Nats-Msg-Id = its id.
func checkExactlyOnceInOrder(t testing.TB, got []stored, n int) {
	t.Helper()
	if len(got) != n {
		seen := map[int]int{}
		for _, s := range got {
			seen[s.n]++
		}
		var dup, missing []int
		for i := 0; i < n; i++ {
			if seen[i] == 0 {
				missing = append(missing, i)
			} else if seen[i] > 1 {
				dup = append(dup, i)
			}
		}
		t.Fatalf("stream has %d events, want %d (missing %v, doubled %v)", len(got), n, missing, dup)
	}
	ids := map[string]bool{}
	for i, s := range got {
		if s.n != i {
			t.Fatalf("stream position %d holds event %d: out of order", i, s.n)
		}
		if s.msgID == "" || s.msgID != s.ev.ID {
			t.Fatalf("event %d: Nats-Msg-Id %q, event id %q", i, s.msgID, s.ev.ID)
		}
		if ids[s.ev.ID] {
			t.Fatalf("id %s twice", s.ev.ID)
		}
		ids[s.ev.ID] = true
	}
}

func TestRecordPublishesDecision(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())

	sub, err := nc.SubscribeSync("palisade.audit.decision.>")
	if err != nil {
		t.Fatal(err)
	}
	ev := decision(0)
	ev.Tool = "Read.File"
	p.Record(context.Background(), ev)
	flush(t, p)

	m, err := sub.NextMsg(waitLimit)
	if err != nil {
		t.Fatalf("no event on NATS: %v", err)
	}
	if want := "palisade.audit.decision.deny.fs.read_file"; m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	var got audit.Event
	if err := json.Unmarshal(m.Data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Action != "deny" || got.Tool != "Read.File" || got.Stage != "rules" || got.RequestedAction != "ask" || got.Kind != audit.KindDecision {
		t.Errorf("event fields: %+v", got)
	}
	if len(got.ID) != 26 || got.Time.IsZero() {
		t.Errorf("Record did not fill id/time: %q %v", got.ID, got.Time)
	}
	if m.Header.Get(audit.HeaderMsgID) != got.ID {
		t.Errorf("Nats-Msg-Id %q != id %q", m.Header.Get(audit.HeaderMsgID), got.ID)
	}
	st := p.Stats()
	if st.Published != 1 || st.Pending != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	// The stream was created with file storage and the default window.
	js, _ := jetstream.New(nc)
	str, err := js.Stream(context.Background(), audit.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := str.CachedInfo().Config
	if cfg.Storage != jetstream.FileStorage || cfg.Duplicates != audit.DefaultDuplicates {
		t.Errorf("stream config storage=%v duplicates=%v", cfg.Storage, cfg.Duplicates)
	}
}

func TestSameIDTwiceStoredOnce(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	ev := decision(0)
	ev.ID = audit.NewID()
	p.Record(context.Background(), ev)
	p.Record(context.Background(), ev)
	flush(t, p)
	got := readStream(t, nc)
	if len(got) != 1 {
		t.Fatalf("stream has %d events for one id, want 1", len(got))
	}
	if st := p.Stats(); st.Duplicates != 1 || st.Published != 2 {
		t.Fatalf("stats %+v, want Duplicates=1 Published=2", st)
	}
}

func TestOtherKindsSubjects(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	evs := []audit.Event{
		{Kind: audit.KindBundleActivated, Bundle: &audit.Bundle{Name: "base", Version: "1.2.0", Digest: "sha256:ab"}},
		{Kind: audit.KindBundleRejected, Bundle: &audit.Bundle{Name: "base", Version: "1.3.0"}, Reason: "fixture failed"},
		{Kind: audit.KindApproval, Approval: &audit.Approval{ID: "ap1", Decision: audit.ApprovalDenied, DecidedBy: "alice"}},
		{Kind: audit.KindToolChanged, Server: "fs", Detail: json.RawMessage(`{"added":["rm"]}`)},
	}
	for _, ev := range evs {
		p.Record(context.Background(), ev)
	}
	flush(t, p)
	got := readStream(t, nc)
	want := []string{"palisade.audit.bundle.activated", "palisade.audit.bundle.rejected", "palisade.audit.approval.denied", "palisade.audit.tool.changed"}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].subject != want[i] {
			t.Errorf("event %d subject %q, want %q", i, got[i].subject, want[i])
		}
	}
}

func TestInvalidRawJSONKept(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	ev := decision(0)
	ev.Arguments = json.RawMessage(`{"broken`)
	p.Record(context.Background(), ev)
	flush(t, p)
	got := readStream(t, nc)
	if len(got) != 1 || string(got[0].ev.Arguments) != `"{\"broken"` {
		t.Fatalf("got %d events, arguments %s", len(got), got[0].ev.Arguments)
	}
}

// The outage test: NATS stops while calls continue, then restarts;
// every event arrives exactly once and in order.
func TestOutageSpoolsThenReplaysExactlyOnceInOrder(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	nc := connect(t, r.URL())
	p := newPublisher(t, nc, t.TempDir())
	ctx := context.Background()

	const before, during, after = 100, 500, 100
	for i := 0; i < before; i++ {
		p.Record(ctx, decision(i))
	}
	flush(t, p)

	r.Stop()
	testenv.Eventually(t, waitLimit, "client to see the outage", func() bool { return !nc.IsConnected() })
	p.Record(ctx, decision(before))
	testenv.Eventually(t, waitLimit, "publisher to start spooling", func() bool { return p.Stats().Spooling })
	for i := before + 1; i < before+during; i++ {
		p.Record(ctx, decision(i))
	}
	if st := p.Stats(); st.Spooled < during-1 || st.Pending != during {
		t.Fatalf("during outage: stats %+v, want Spooled >= %d and Pending = %d", st, during-1, during)
	}

	r.Start()
	for i := before + during; i < before+during+after; i++ {
		p.Record(ctx, decision(i)) // may race the replay: must still land after it
	}
	flush(t, p)
	checkExactlyOnceInOrder(t, readStream(t, nc), before+during+after)
	st := p.Stats()
	if st.Replayed < during-1 || st.Dropped != 0 || st.Spooling {
		t.Fatalf("after replay: stats %+v", st)
	}
}

// Calls keep coming from several goroutines through a stop and a restart.
func TestOutageWithConcurrentRecorders(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	nc := connect(t, r.URL())
	p := newPublisher(t, nc, t.TempDir())
	ctx := context.Background()

	var mu sync.Mutex // Record order = n order across goroutines
	next := 0
	record := func() {
		mu.Lock()
		p.Record(ctx, decision(next))
		next++
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					record()
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return next }
	testenv.Eventually(t, waitLimit, "some events before the outage", func() bool { return count() > 500 })
	r.Stop()
	testenv.Eventually(t, waitLimit, "outage seen", func() bool { return !nc.IsConnected() })
	c := count()
	testenv.Eventually(t, waitLimit, "events during the outage", func() bool { return count() > c+2000 })
	r.Start()
	testenv.Eventually(t, waitLimit, "reconnect", nc.IsConnected)
	c = count()
	testenv.Eventually(t, waitLimit, "events after the restart", func() bool { return count() > c+500 })
	close(stop)
	wg.Wait()
	flush(t, p)
	n := count()
	checkExactlyOnceInOrder(t, readStream(t, nc), n)
	if st := p.Stats(); st.Spooled == 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v: want spooled > 0, dropped 0", st)
	}
}

// A server that comes back without its store (an external cluster rebuilt)
// gets the stream created again, and the spool replays into it.
func TestStreamRecreatedWhenServerLosesStore(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	nc := connect(t, r.URL())
	p := newPublisher(t, nc, t.TempDir())
	ctx := context.Background()
	p.Record(ctx, decision(0))
	flush(t, p)
	r.Stop()
	testenv.Eventually(t, waitLimit, "outage seen", func() bool { return !nc.IsConnected() })
	if err := os.RemoveAll(r.StoreDir()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		p.Record(ctx, decision(i))
	}
	r.Start()
	flush(t, p)
	got := readStream(t, nc)
	if len(got) != 20 || got[0].n != 1 || got[19].n != 20 {
		t.Fatalf("recreated stream holds %d events (first %+v)", len(got), got)
	}
}

// Close with NATS down keeps every event on disk; the next publisher on the
// same spool replays them, in order, before its own.
func TestCloseSpoolsAndNextRunReplays(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	r.Stop()
	nc := connect(t, r.URL())
	dir := t.TempDir()
	p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: dir, QueueSize: 8})
	if err != nil {
		t.Fatalf("New while NATS is down: %v", err)
	}
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		p.Record(ctx, decision(i))
	}
	cctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	p.Record(ctx, decision(999)) // after Close: counted as dropped, no panic
	if st := p.Stats(); st.Pending != 50 || st.Dropped != 1 {
		t.Fatalf("after Close: stats %+v, want Pending=50 Dropped=1", st)
	}
	if fi, err := os.Stat(filepath.Join(dir, "audit.spool")); err != nil || fi.Size() == 0 {
		t.Fatalf("spool file after Close: %v %v", fi, err)
	}

	r.Start()
	testenv.Eventually(t, waitLimit, "reconnect", nc.IsConnected)
	p2 := newPublisher(t, nc, dir)
	for i := 50; i < 60; i++ {
		p2.Record(ctx, decision(i))
	}
	flush(t, p2)
	checkExactlyOnceInOrder(t, readStream(t, nc), 60)
}

func TestNewRefusesBufferingConn(t *testing.T) {
	s := testenv.StartNATS(t)
	nc, err := nats.Connect(s.ClientURL()) // default 8MB reconnect buffer
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: t.TempDir()}); !errors.Is(err, audit.ErrConnBuffers) {
		t.Fatalf("New with a buffering conn: err = %v, want ErrConnBuffers", err)
	}
}

func TestNewRequiresConnAndSpoolDir(t *testing.T) {
	if _, err := audit.New(context.Background(), audit.Options{SpoolDir: t.TempDir()}); err == nil {
		t.Error("New without Conn succeeded")
	}
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	if _, err := audit.New(context.Background(), audit.Options{Conn: nc}); err == nil {
		t.Error("New without SpoolDir succeeded")
	}
}

func TestFlushHonoursContextWhileDown(t *testing.T) {
	r := testenv.StartRestartableNATS(t)
	nc := connect(t, r.URL())
	p := newPublisher(t, nc, t.TempDir())
	r.Stop()
	testenv.Eventually(t, waitLimit, "outage seen", func() bool { return !nc.IsConnected() })
	p.Record(context.Background(), decision(0))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush while down = %v, want DeadlineExceeded", err)
	}
	r.Start()
	flush(t, p)
	if got := readStream(t, nc); len(got) != 1 {
		t.Fatalf("got %d events, want 1", len(got))
	}
}

func TestOversizedEventTrimmedNotBlocking(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	ctx := context.Background()
	big := decision(0)
	big.Arguments = json.RawMessage(`{"content":"` + strings.Repeat("a", 2<<20) + `"}`)
	big.ArgumentsSHA256 = audit.ArgumentsHash(big.Arguments)
	p.Record(ctx, big)
	p.Record(ctx, decision(1))
	flush(t, p)
	got := readStream(t, nc)
	if len(got) != 2 || got[1].n != 1 {
		t.Fatalf("stream holds %d events", len(got))
	}
	first := got[0].ev
	if first.Arguments != nil || first.ArgumentsSHA256 != big.ArgumentsSHA256 || first.Tool != "read_file" {
		t.Fatalf("trimmed event: arguments %d bytes, sha %q, tool %q", len(first.Arguments), first.ArgumentsSHA256, first.Tool)
	}
	var note struct {
		Truncated     bool `json:"truncated"`
		OriginalBytes int  `json:"original_bytes"`
	}
	if err := json.Unmarshal(first.Detail, &note); err != nil || !note.Truncated || note.OriginalBytes < 2<<20 {
		t.Fatalf("detail %s does not record the trim", first.Detail)
	}
}

// An event over the server's max payload (MaxEventBytes set above it) is
// dropped and counted; it must not block the events after it.
func TestEventOverServerLimitDropped(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p, err := audit.New(context.Background(), audit.Options{Conn: nc, SpoolDir: t.TempDir(), MaxEventBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx := context.Background()
	big := decision(1)
	big.Detail = json.RawMessage(`{"n":1,"blob":"` + strings.Repeat("b", 2<<20) + `"}`)
	p.Record(ctx, decision(0))
	p.Record(ctx, big)
	p.Record(ctx, decision(2))
	flush(t, p)
	got := readStream(t, nc)
	if len(got) != 2 || got[0].n != 0 || got[1].n != 2 {
		t.Fatalf("stream holds %d events: %+v", len(got), got)
	}
	if st := p.Stats(); st.Dropped != 1 || st.Pending != 0 {
		t.Fatalf("stats %+v, want Dropped=1 Pending=0", st)
	}
}

func TestConcurrentCloseAndRecord(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p.Record(context.Background(), decision(i))
			}
		}()
		go func() {
			defer wg.Done()
			if err := p.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	st := p.Stats()
	if st.Published+st.Dropped+st.Pending != 800 {
		t.Fatalf("stats %+v: published+dropped+pending != 800 recorded", st)
	}
}

// The worker reuses an acknowledged batch's messages (and their header maps) for the next
// batch: batches of one (each flushed) then bursts of many, the next batch larger than the
// last, must each be stored once, in order, under its own Nats-Msg-Id with its own data.
func TestMessagesReusedAcrossBatches(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	ctx := context.Background()
	n := 0
	for range 20 { // one at a time: every batch reuses the last one's message
		p.Record(ctx, decision(n))
		n++
		flush(t, p)
	}
	for _, burst := range []int{3, 50, 7, 120, 1} { // larger and smaller than the spare messages
		for range burst {
			p.Record(ctx, decision(n))
			n++
		}
		flush(t, p)
	}
	checkExactlyOnceInOrder(t, readStream(t, nc), n)
}
