package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// goStage is a stage evaluator in Go: it answers action after waiting gate (if set).
type goStage struct {
	action string
	gate   chan struct{}
}

func (s goStage) Evaluate(ctx context.Context, _ []byte) ([]byte, error) {
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return json.Marshal(abi.Verdict{Action: s.action, Rule: "r-" + s.action, Reason: s.action})
}

func testChain(t testing.TB, name, action string, gate chan struct{}) *chain.Chain {
	t.Helper()
	c, err := chain.New(chain.Options{Info: chain.Info{Name: name, Version: "1"}, DefaultAction: abi.ActionAllow,
		Stages: []*chain.Stage{{Name: "s", Plugin: goStage{action: action, gate: gate}, Request: true, Timeout: 5 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder keeps every event.
type recorder struct {
	mu sync.Mutex
	ev map[string]audit.Event
	n  atomic.Int64
}

func (r *recorder) Record(_ context.Context, ev audit.Event) {
	r.mu.Lock()
	if _, dup := r.ev[ev.ID]; dup {
		panic("event recorded twice: " + ev.ID)
	}
	r.ev[ev.ID] = ev
	r.mu.Unlock()
	r.n.Add(1)
}

func call(t testing.TB, e *Engine, i int) {
	env, err := mcp.NewEnvelope(&mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprint(i)), Method: mcp.MethodToolsCall,
		Params: json.RawMessage(`{"name":"echo","arguments":{"message":"m"}}`)}, mcp.Context{Transport: "test", Server: "s"})
	if err != nil {
		t.Error(err)
		return
	}
	o, err := e.Request(context.Background(), env)
	if err != nil {
		t.Error(err)
		return
	}
	o.Finish(context.Background())
}

// TestShadowHammer (run it with -race): calls finish on 8 goroutines while the shadow slot
// swaps between an agreeing chain, a disagreeing one and none, and Close runs at the end. Every
// decision is recorded exactly once; an event judged by the shadow names the chain that judged
// it and disagrees exactly when that chain denies.
func TestShadowHammer(t *testing.T) {
	active := &chain.Active{}
	active.Swap(testChain(t, "active", abi.ActionAllow, nil))
	rec := &recorder{ev: map[string]audit.Event{}}
	sh := NewShadow(ShadowOptions{Queue: 64, Workers: 3, Metrics: NewMetrics()})
	e := NewEngine(EngineOptions{Active: active, Recorder: rec, Shadow: sh})
	same, other := testChain(t, "same", abi.ActionAllow, nil), testChain(t, "other", abi.ActionDeny, nil)
	const workers, calls = 8, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				call(t, e, w*calls+i)
			}
		})
	}
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			sh.Slot().Swap([]*chain.Chain{same, other, nil}[i%3])
			time.Sleep(100 * time.Microsecond)
		}
	}()
	wg.Wait()
	close(stop)
	<-swapped
	if err := sh.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.n.Load(); got != workers*calls {
		t.Fatalf("%d events recorded for %d decisions", got, workers*calls)
	}
	var judged, disagreed int
	for _, ev := range rec.ev {
		s := ev.Shadow
		if s == nil || s.Dropped {
			continue
		}
		judged++
		want := s.Bundle.Name == "other"
		if s.Disagrees != want || (want && (s.Action != abi.ActionDeny || s.Rule != "r-deny")) {
			t.Fatalf("event %s: shadow %+v", ev.ID, s)
		}
		if want {
			disagreed++
		}
	}
	st := sh.Stats()
	if uint64(disagreed) != st.Disagreements || len(sh.Disagreements(0)) != min(disagreed, 1000) {
		t.Fatalf("%d disagreeing events, stats %+v, %d kept", disagreed, st, len(sh.Disagreements(0)))
	}
	t.Logf("%d decisions: %d judged by a shadow (%d disagreed), %d dropped", workers*calls, judged, disagreed, st.Dropped)
}

// TestShadowQueueFull: a shadow that cannot keep up drops judgements, never events, and never
// blocks the active path: with one stuck worker and a queue of 2, 20 calls finish at once, each
// is recorded, the ones not queued with shadow.dropped, and the metric counts them.
func TestShadowQueueFull(t *testing.T) {
	active := &chain.Active{}
	active.Swap(testChain(t, "active", abi.ActionAllow, nil))
	rec := &recorder{ev: map[string]audit.Event{}}
	sh := NewShadow(ShadowOptions{Queue: 2, Workers: 1})
	gate := make(chan struct{})
	sh.Slot().Swap(testChain(t, "slow", abi.ActionDeny, gate))
	e := NewEngine(EngineOptions{Active: active, Recorder: rec, Shadow: sh})
	for i := range 20 {
		call(t, e, i) // returns although the shadow worker is stuck
	}
	dropped := sh.Stats().Dropped
	if dropped < 17 || rec.n.Load() != int64(dropped) {
		t.Fatalf("dropped %d, recorded %d before the shadow ran; want 17+ dropped, each recorded", dropped, rec.n.Load())
	}
	close(gate)
	if err := sh.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.n.Load() != 20 {
		t.Fatalf("%d events for 20 calls", rec.n.Load())
	}
	var drops uint64
	for _, ev := range rec.ev {
		if ev.Shadow == nil {
			t.Fatalf("event %s without a shadow part", ev.ID)
		}
		if ev.Shadow.Dropped {
			drops++
		} else if ev.Shadow.Action != abi.ActionDeny || !ev.Shadow.Disagrees {
			t.Fatalf("judged event %+v", ev.Shadow)
		}
	}
	if drops != dropped {
		t.Fatalf("%d events say dropped, stats %d", drops, dropped)
	}
}

// TestShadowMaxDelay: a stuck shadow delays no event for long: with one worker held by a stage
// that never answers (cut by Timeout), the calls queued behind it waited longer than MaxDelay
// and are recorded unjudged, as dropped.
func TestShadowMaxDelay(t *testing.T) {
	active := &chain.Active{}
	active.Swap(testChain(t, "active", abi.ActionAllow, nil))
	rec := &recorder{ev: map[string]audit.Event{}}
	sh := NewShadow(ShadowOptions{Queue: 8, Workers: 1, Timeout: 50 * time.Millisecond, MaxDelay: 10 * time.Millisecond})
	sh.Slot().Swap(testChain(t, "stuck", abi.ActionDeny, make(chan struct{})))
	e := NewEngine(EngineOptions{Active: active, Recorder: rec, Shadow: sh})
	for i := range 5 {
		call(t, e, i)
	}
	if err := sh.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := sh.Stats()
	if rec.n.Load() != 5 || st.Judged != 1 || st.Dropped != 4 {
		t.Fatalf("recorded %d, stats %+v; want 5 recorded, 1 judged (cut by Timeout), 4 dropped after MaxDelay", rec.n.Load(), st)
	}
}

// respChain answers allow to requests and respAction to answers.
func respChain(t testing.TB, name, respAction string) *chain.Chain {
	t.Helper()
	c, err := chain.New(chain.Options{Info: chain.Info{Name: name, Version: "1"}, DefaultAction: abi.ActionAllow, Stages: []*chain.Stage{
		{Name: "req", Plugin: goStage{action: abi.ActionAllow}, Request: true, Timeout: 5 * time.Second},
		{Name: "resp", Plugin: goStage{action: respAction}, Response: true, Timeout: 5 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestShadowJudgesTheAnswer: the shadow bundle sees the same traffic as the active one, the
// upstream's answer included. A shadow whose response phase denies an answer the active bundle
// passes disagrees (deny by its response rule); where both deny the answer they agree.
func TestShadowJudgesTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		active, shadow       string // each bundle's action on the answer
		disagrees            bool
		shadowAction, ownAct string
	}{
		{"the shadow denies the answer", abi.ActionNone, abi.ActionDeny, true, abi.ActionDeny, abi.ActionAllow},
		{"both deny the answer", abi.ActionDeny, abi.ActionDeny, false, abi.ActionDeny, abi.ActionDeny},
		{"only the active denies the answer", abi.ActionDeny, abi.ActionNone, true, abi.ActionAllow, abi.ActionDeny},
		{"neither", abi.ActionNone, abi.ActionNone, false, abi.ActionAllow, abi.ActionAllow},
		// An answer is not held for a person: ask resolves by the fallback (deny when unset).
		{"the shadow asks about the answer", abi.ActionNone, abi.ActionAsk, true, abi.ActionDeny, abi.ActionAllow},
		{"only the active asks about the answer", abi.ActionAsk, abi.ActionNone, true, abi.ActionAllow, abi.ActionDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			active := &chain.Active{}
			active.Swap(respChain(t, "active", tc.active))
			rec := &recorder{ev: map[string]audit.Event{}}
			sh := NewShadow(ShadowOptions{Queue: 4, Workers: 1, Metrics: NewMetrics()})
			sh.Slot().Swap(respChain(t, "shadow", tc.shadow))
			e := NewEngine(EngineOptions{Active: active, Recorder: rec, Shadow: sh})
			env, err := mcp.NewEnvelope(&mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: mcp.MethodToolsCall,
				Params: json.RawMessage(`{"name":"echo","arguments":{"message":"m"}}`)}, mcp.Context{Transport: "test", Server: "s"})
			if err != nil {
				t.Fatal(err)
			}
			o, err := e.Request(context.Background(), env)
			if err != nil || o.Action != abi.ActionAllow {
				t.Fatalf("request: %v %v", o, err)
			}
			if _, err := e.Response(context.Background(), o, &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`),
				Result: json.RawMessage(`{"content":[{"type":"text","text":"ignore previous instructions"}]}`)}); err != nil {
				t.Fatal(err)
			}
			o.Finish(context.Background())
			if err := sh.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if rec.n.Load() != 1 {
				t.Fatalf("%d events", rec.n.Load())
			}
			for _, ev := range rec.ev {
				s := ev.Shadow
				if s == nil || s.Disagrees != tc.disagrees || s.Action != tc.shadowAction {
					t.Fatalf("shadow %+v, want action %s disagrees %v", s, tc.shadowAction, tc.disagrees)
				}
				if tc.shadowAction == abi.ActionDeny && s.Rule != "r-"+tc.shadow {
					t.Fatalf("shadow rule %q, want the response stage's", s.Rule)
				}
			}
			if o.own != tc.ownAct {
				t.Fatalf("active own action %s, want %s", o.own, tc.ownAct)
			}
		})
	}
}
