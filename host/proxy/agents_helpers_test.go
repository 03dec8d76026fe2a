package proxy_test

import (
	"context"
	"sync"
	"testing"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/testenv"
)

// agentsEngine builds the agents test bundle and returns an engine recording into rec.
func agentsEngine(t testing.TB, rec engine.Recorder) *engine.Engine {
	t.Helper()
	active := &chain.Active{}
	active.Swap(testenv.BuildBundle(t, testenv.AgentsBundle(t, nil)).Chain)
	return engine.NewEngine(engine.EngineOptions{Active: active, Recorder: rec, Gateway: "test"})
}

// sink keeps the events it is given (the audit Publisher is exercised by the NATS tests).
type sink struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (s *sink) Record(_ context.Context, ev audit.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
}

func (s *sink) events() []audit.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Event(nil), s.evs...)
}
