package audit

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSubjectToken(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "_"},
		{"plain", "read_file", "read_file"},
		{"upper", "ReadFile", "readfile"},
		{"dot splits tokens", "fs.read", "fs_read"},
		{"wildcards", "a*b>c", "a_b_c"},
		{"slash", "fs/read", "fs_read"},
		{"space", "my tool", "my_tool"},
		{"dash kept", "get-env", "get-env"},
		{"digits", "v2", "v2"},
		{"unicode one underscore per rune", "héllo", "h_llo"},
		{"newline", "a\nb", "a_b"},
		{"long capped", strings.Repeat("x", 100), strings.Repeat("x", MaxTokenLen)},
		{"invalid utf8", "a\xffb", "a_b"},
		{"clean at the cap", strings.Repeat("a", MaxTokenLen), strings.Repeat("a", MaxTokenLen)},
		{"clean one past the cap", strings.Repeat("a", MaxTokenLen+1), strings.Repeat("a", MaxTokenLen)},
		{"clean but for the last byte", "read_file.", "read_file_"},
		{"clean but for an upper-case first", "Xread", "xread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SubjectToken(tc.in); got != tc.want {
				t.Errorf("SubjectToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// A name that is already a token is returned as it is, with no allocation; anything else is
// built (TestSubjectToken checks both give the same token).
func TestSubjectTokenCleanNoAlloc(t *testing.T) {
	for _, in := range []string{"allow", "read_file", "get-env", "v2", strings.Repeat("z", MaxTokenLen)} {
		if n := testing.AllocsPerRun(100, func() { _ = SubjectToken(in) }); n != 0 {
			t.Errorf("SubjectToken(%q): %v allocations, want 0", in, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = SubjectToken("Read") }); n == 0 {
		t.Error("SubjectToken(\"Read\") allocated nothing: the clean path took a name that needs lower-casing")
	}
}

func TestEventSubject(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   Event
		want string
	}{
		{"decision", Event{Kind: KindDecision, Action: "deny", Server: "fs", Tool: "read_file"}, "palisade.audit.decision.deny.fs.read_file"},
		{"empty kind is decision", Event{Action: "allow", Server: "gh", Tool: "list"}, "palisade.audit.decision.allow.gh.list"},
		{"decision sanitized", Event{Kind: KindDecision, Action: "ALLOW", Server: "my.server", Tool: "a>*"}, "palisade.audit.decision.allow.my_server.a__"},
		{"decision empty parts", Event{Kind: KindDecision}, "palisade.audit.decision._._._"},
		{"bundle activated", Event{Kind: KindBundleActivated, Tool: "x"}, "palisade.audit.bundle.activated"},
		{"bundle rejected", Event{Kind: KindBundleRejected}, "palisade.audit.bundle.rejected"},
		{"approval approved", Event{Kind: KindApproval, Approval: &Approval{ID: "a", Decision: ApprovalApproved}}, "palisade.audit.approval.approved"},
		{"held", Event{Kind: KindHeld, Server: "GitHub", Tool: "merge.pr", Approval: &Approval{ID: "a", Decision: ApprovalHeld}}, "palisade.audit.held.github.merge_pr"},
		{"approval timeout", Event{Kind: KindApproval, Approval: &Approval{ID: "a", Decision: ApprovalTimeout}}, "palisade.audit.approval.timeout"},
		{"approval missing", Event{Kind: KindApproval}, "palisade.audit.approval._"},
		{"tool changed", Event{Kind: KindToolChanged, Server: "s"}, "palisade.audit.tool.changed"},
		{"unknown kind", Event{Kind: "Weird.Kind"}, "palisade.audit.event.weird_kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ev.Subject(); got != tc.want {
				t.Errorf("Subject() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewIDSortableUnique(t *testing.T) {
	const goroutines, per = 8, 2000
	var mu sync.Mutex
	seen := make(map[string]bool, goroutines*per)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := ""
			local := make([]string, 0, per)
			for i := 0; i < per; i++ {
				id := NewID()
				if len(id) != 26 {
					t.Errorf("NewID() = %q, length %d, want 26", id, len(id))
					return
				}
				if id <= prev {
					t.Errorf("NewID() not increasing in one goroutine: %q after %q", id, prev)
					return
				}
				prev = id
				local = append(local, id)
			}
			mu.Lock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != goroutines*per {
		t.Fatalf("got %d unique ids, want %d", len(seen), goroutines*per)
	}
	// Sequential ids sort in creation order.
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = NewID()
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("sequential NewID values are not sorted")
	}
	for _, c := range ids[0] {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			t.Fatalf("id %q has %q outside the Crockford alphabet", ids[0], c)
		}
	}
	if len(ids[0]) != 26 {
		t.Fatalf("id %q is not 26 characters", ids[0])
	}
}

func TestArgumentsHash(t *testing.T) {
	// sha256("") is a known constant.
	if got, want := ArgumentsHash(nil), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Fatalf("ArgumentsHash(nil) = %s, want %s", got, want)
	}
}

// A held record names its call: in its tail line and through CallID.
func TestHeldRecordLine(t *testing.T) {
	ev := Event{ID: "h1", Kind: KindHeld, Time: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC), Server: "gh", Tool: "merge",
		Rule: "review", Action: "ask", Approval: &Approval{ID: "call-1", Decision: ApprovalHeld}}
	if got, want := FormatLine(&ev), "2026-11-28T09:00:00.000Z held   gh/merge rule=review call=call-1"; got != want {
		t.Errorf("FormatLine = %q, want %q", got, want)
	}
	if ev.CallID() != "call-1" {
		t.Errorf("CallID = %q", ev.CallID())
	}
	d := Event{ID: "d1", Kind: KindDecision, Approval: &Approval{ID: "ap", Decision: ApprovalApproved}}
	if d.CallID() != "d1" {
		t.Errorf("a decision's CallID = %q, want its own id", d.CallID())
	}
}
