package audit

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testWindow is the stream's de-duplication window in these tests: short, so that a retry can
// come after it.
const testWindow = 200 * time.Millisecond

func shortWindow(t *testing.T) {
	t.Helper()
	t.Cleanup(SetMinDuplicates(testWindow))
}

// startJetStream runs an embedded JetStream server for one test (host/internal/testenv cannot
// be imported here: it imports this package).
func startJetStream(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// shortWindowStream starts a server with the audit stream at testWindow and connects to it.
func shortWindowStream(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc := recheckConn(t, startJetStream(t).ClientURL())
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := EnsureStream(ctx, js, Options{Duplicates: testWindow}); err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func recheckConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, append(ConnOptions(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// spoolWithSent writes n linked events to a spool in dir, as a publisher that spooled them
// would, and publishes the first sent of them to the stream straight away, as a publish whose
// ack was lost would have: the stream holds those, the spool still has all n. With mark, the
// spool also says when they were sent (audit.spool.sent), as the publisher saves it.
func spoolWithSent(t *testing.T, js jetstream.JetStream, dir string, n, sent int, mark bool) []string {
	t.Helper()
	sp, _, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := chainer{id: NewID()}
	ids := make([]string, n)
	var recs []record
	for i := range n {
		ev := Event{Kind: KindDecision, Action: "deny", Server: "fs", Tool: "read_file", Stage: "rules"}
		ev.FillDefaults()
		data, err := json.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		r := record{id: ev.ID, subject: ev.Subject(), data: c.link(data)}
		if err := sp.append(r); err != nil {
			t.Fatal(err)
		}
		ids[i], recs = ev.ID, append(recs, r)
	}
	start := time.Now()
	for _, r := range recs[:sent] {
		m := &nats.Msg{Subject: r.subject, Data: r.data, Header: nats.Header{HeaderMsgID: []string{r.id}}}
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	if mark {
		if err := sp.writeSent(doubt{from: start, to: time.Now().Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// storedIDs counts the stream's messages per Nats-Msg-Id.
func storedIDs(t *testing.T, js jetstream.JetStream) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, DefaultStream, jetstream.OrderedConsumerConfig{HeadersOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := each(cons, func(m jetstream.Msg, _ *jetstream.MsgMetadata) bool {
		got[m.Headers().Get(HeaderMsgID)]++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// replay starts a publisher on dir, waits until it has published everything, and closes it.
func replay(t *testing.T, nc *nats.Conn, dir string) Stats {
	t.Helper()
	p, err := New(context.Background(), Options{Conn: nc, SpoolDir: dir, PublishTimeout: 2 * time.Second, Duplicates: testWindow})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("flush: %v (%+v)", err, p.Stats())
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p.Stats()
}

// A spool whose first events were sent without an ack, replayed after the stream's
// de-duplication window: with the send span saved, the replay finds them in the stream and
// stores each event once; without it (the control), the stream has forgotten their ids and
// stores them twice, which is what the recheck is for.
func TestReplayAfterWindowRechecks(t *testing.T) {
	shortWindow(t)
	for _, tc := range []struct {
		name      string
		mark      bool
		wantTwice int
	}{
		{"send span saved", true, 0},
		{"control: no send span", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, js := shortWindowStream(t)
			dir := t.TempDir()
			ids := spoolWithSent(t, js, dir, 5, 2, tc.mark)
			time.Sleep(3 * testWindow) // the stream forgets the ids of the two sent
			st := replay(t, nc, dir)
			got := storedIDs(t, js)
			twice := 0
			for _, id := range ids {
				switch got[id] {
				case 1:
				case 2:
					twice++
				default:
					t.Errorf("event %s stored %d times", id, got[id])
				}
			}
			if twice != tc.wantTwice {
				t.Errorf("%d events stored twice, want %d (stream %v)", twice, tc.wantTwice, got)
			}
			if tc.mark && (st.Rechecks != 1 || st.Duplicates != 2 || st.Replayed != 5) {
				t.Errorf("stats %+v, want Rechecks=1 Duplicates=2 Replayed=5", st)
			}
			if _, err := os.Stat(filepath.Join(dir, spoolSentFile)); err == nil {
				if d, err := (&spool{dir: dir}).readSent(); err != nil || !d.none() {
					t.Errorf("send span after the replay: %v %v, want none", d, err)
				}
			}
		})
	}
}

// An unreadable send span is named in the error, and the replay does not trust it: it rechecks
// from the first spooled event's time, so nothing is stored twice.
func TestReplayWithCorruptSendSpan(t *testing.T) {
	shortWindow(t)
	nc, js := shortWindowStream(t)
	dir := t.TempDir()
	ids := spoolWithSent(t, js, dir, 4, 3, false)
	if err := os.WriteFile(filepath.Join(dir, spoolSentFile), []byte("12 tomorrow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&spool{dir: dir}).readSent()
	if !errors.Is(err, errSentCorrupt) || !strings.Contains(err.Error(), "audit.spool.sent") || !strings.Contains(err.Error(), "tomorrow") {
		t.Fatalf("readSent of a corrupt span: %v", err)
	}
	time.Sleep(3 * testWindow)
	st := replay(t, nc, dir)
	got := storedIDs(t, js)
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("event %s stored %d times, want 1", id, got[id])
		}
	}
	if st.Rechecks != 1 || st.Duplicates != 3 {
		t.Errorf("stats %+v, want Rechecks=1 Duplicates=3", st)
	}
}

// The span round-trips through the file, none is saved as none, and a span is only written once
// something was sent.
func TestSendSpanFile(t *testing.T) {
	dir := t.TempDir()
	s := &spool{dir: dir}
	if err := s.writeSent(doubt{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, spoolSentFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an empty span made a file: %v", err)
	}
	want := doubt{from: time.Unix(0, 1_700_000_000_123_456_789), to: time.Unix(0, 1_700_000_005_000_000_000)}
	if err := s.writeSent(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.readSent()
	if err != nil || !got.from.Equal(want.from) || !got.to.Equal(want.to) {
		t.Fatalf("read back %v %v, want %v", got, err, want)
	}
	if err := s.writeSent(doubt{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.readSent(); err != nil || !got.none() {
		t.Fatalf("cleared span reads %v %v", got, err)
	}
	s.sentF.Close()
}

// Close with events sent but not acked (the worker's doubt) saves the span beside the spool, so
// the next start rechecks it.
func TestCloseSavesSendSpan(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a NATS that never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	nc, err := nats.Connect("nats://"+ln.Addr().String(), append(ConnOptions(), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dir := t.TempDir()
	p, err := New(context.Background(), Options{Conn: nc, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p.Record(context.Background(), Event{Kind: KindDecision, Action: "allow", Server: "fs", Tool: "read_file"})
	}
	// The worker never connects, so it never reads the doubt: set it as a lost ack would have.
	want := doubt{from: time.Unix(0, 1_700_000_000_000_000_000), to: time.Unix(0, 1_700_000_002_000_000_000)}
	p.doubt = want
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := (&spool{dir: dir}).readSent()
	if err != nil || !got.from.Equal(want.from) || !got.to.Equal(want.to) {
		t.Fatalf("span after Close: %v %v, want %v", got, err, want)
	}
	sp, _, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	if sp.count != 2 || !sp.sent.from.Equal(want.from) {
		t.Fatalf("reopened spool: %d events, span %v", sp.count, sp.sent)
	}
}
