package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/sdk/go/abi"
)

// syncBuffer is written by Tail's goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.TrimSpace(s.b.String())
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func seed(t *testing.T, p *audit.Publisher) {
	t.Helper()
	ctx := context.Background()
	for i, tc := range []struct{ action, server, tool string }{
		{"allow", "fs", "list"}, {"deny", "fs", "read_file"}, {"allow", "gh", "search"},
		{"deny", "gh", "delete_repo"}, {"ask", "fs", "write_file"},
	} {
		ev := decision(i)
		ev.Action, ev.Server, ev.Tool = tc.action, tc.server, tc.tool
		p.Record(ctx, ev)
	}
	p.Record(ctx, audit.Event{Kind: audit.KindBundleActivated, Bundle: &audit.Bundle{Name: "base", Version: "2"}})
	flush(t, p)
}

func TestTailLastWithFilter(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	seed(t, p)

	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := audit.Tail(ctx, nc, audit.TailOptions{Filter: []string{"action=deny"}, Last: 10, Count: 2}, &out)
	if err != nil {
		t.Fatalf("Tail: %v", err)
	}
	lines := out.Lines()
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, want := range []string{"deny   fs/read_file stage=rules requested=ask rule=no-secrets", "deny   gh/delete_repo"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], want)
		}
	}
}

func TestTailJSONFollowsNewEvents(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	seed(t, p) // old events: not printed without Last/Since

	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- audit.Tail(ctx, nc, audit.TailOptions{JSON: true, Filter: []string{"server=g*", "tool=*repo", "tool=search"}}, &out)
	}()
	// Publish until Tail's consumer is surely live, then check what it printed.
	ev := decision(100)
	ev.Action, ev.Server, ev.Tool = "deny", "GH", "fork_repo"
	other := decision(101)
	other.Server, other.Tool = "fs", "fork_repo"
	deadline := time.Now().Add(waitLimit)
	for len(out.Lines()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Tail printed nothing")
		}
		p.Record(context.Background(), other)
		p.Record(context.Background(), ev)
		flush(t, p)
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Tail after cancel: %v", err)
	}
	for _, l := range out.Lines() {
		var got audit.Event
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("--json line is not an event: %q: %v", l, err)
		}
		if got.Server != "GH" || got.Tool != "fork_repo" {
			t.Fatalf("filter let through %s/%s", got.Server, got.Tool)
		}
	}
}

func TestTailSinceIncludesBundleEvents(t *testing.T) {
	s := testenv.StartNATS(t)
	nc := connect(t, s.ClientURL())
	p := newPublisher(t, nc, t.TempDir())
	start := time.Now().Add(-time.Minute)
	seed(t, p)
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := audit.Tail(ctx, nc, audit.TailOptions{Since: start, Filter: []string{"kind=bundle.*"}, Count: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if l := out.Lines(); len(l) != 1 || !strings.Contains(l[0], "bundle.activated base@2") {
		t.Fatalf("lines %q", l)
	}
}

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		filters []string
		ev      audit.Event
		want    bool
		wantErr bool
	}{
		{"no filters match all", nil, audit.Event{}, true, false},
		{"exact", []string{"action=deny"}, audit.Event{Action: "deny"}, true, false},
		{"case-insensitive", []string{"Tool=READ_*"}, audit.Event{Tool: "read_file"}, true, false},
		{"and across keys", []string{"action=deny", "server=fs"}, audit.Event{Action: "deny", Server: "gh"}, false, false},
		{"or within key", []string{"action=deny", "action=ask"}, audit.Event{Action: "ask"}, true, false},
		{"label", []string{"label=secrets"}, audit.Event{Stages: []abi.StageResult{{Stage: "x", Labels: []string{"pii", "secrets"}}}}, true, false},
		{"bundle nil", []string{"bundle=base"}, audit.Event{}, false, false},
		{"unknown key", []string{"colour=red"}, audit.Event{}, false, true},
		{"no equals", []string{"deny"}, audit.Event{}, false, true},
		{"bad glob", []string{"tool=[x"}, audit.Event{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := audit.ParseFilter(tc.filters)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseFilter(%q) err = %v, wantErr %v", tc.filters, err, tc.wantErr)
			}
			if err == nil && m.Match(&tc.ev) != tc.want {
				t.Fatalf("Match = %v, want %v", !tc.want, tc.want)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"10m", now.Add(-10 * time.Minute), false},
		{" 24h ", now.Add(-24 * time.Hour), false},
		{"2026-11-22T10:00:00Z", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), false},
		{"-5m", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"", time.Time{}, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := audit.ParseSince(tc.in, now)
			if (err != nil) != tc.wantErr || !got.Equal(tc.want) {
				t.Fatalf("ParseSince(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
