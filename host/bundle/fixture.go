package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/added060/palisade/host/internal/atomicfile"

	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Fixture is an MCP request with the decision the bundle must reach.
type Fixture struct {
	Name     string          `json:"name,omitempty"`
	Method   string          `json:"method"`
	Params   json.RawMessage `json:"params"`
	Server   string          `json:"server,omitempty"`
	Agent    string          `json:"agent,omitempty"`
	Cwd      string          `json:"cwd,omitempty"`
	Expected string          `json:"expected,omitempty"`
	// Principal is who calls (the envelope's principal, ABI 1.1), for rules about people:
	// {"issuer": ..., "subject": ..., "claims": {"groups": [...]}}; absent = unauthenticated.
	Principal *abi.Principal `json:"principal,omitempty"`
	// EnvelopeJSON, instead of method and params, gives the whole envelope (e.g. a response
	// phase with a result).
	EnvelopeJSON json.RawMessage `json:"envelope,omitempty"`
	File         string          `json:"-"`
}

// ReadFixtures reads every *.json file in dir (sorted). A file may hold one fixture or an array.
func ReadFixtures(dir string) ([]Fixture, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Fixture
	for _, p := range paths {
		fs, err := ReadFixtureFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// ReadFixtureFile reads one fixture file (an object or an array of objects).
func ReadFixtureFile(p string) ([]Fixture, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return parseFixtures(p, b)
}

// parseFixtures decodes the fixture file p holding b.
func parseFixtures(p string, b []byte) ([]Fixture, error) {
	var err error
	var fs []Fixture
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "[") {
		err = json.Unmarshal(b, &fs)
	} else {
		var f Fixture
		err = json.Unmarshal(b, &f)
		fs = []Fixture{f}
	}
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", p, err)
	}
	for i := range fs {
		fs[i].File = filepath.Base(p)
		if fs[i].Method == "" && len(fs[i].EnvelopeJSON) > 0 {
			var env abi.Envelope
			if err := json.Unmarshal(fs[i].EnvelopeJSON, &env); err != nil {
				return nil, fmt.Errorf("fixture %s[%d]: envelope: %w", p, i, err)
			}
			fs[i].Method = env.Method
		}
		if fs[i].Method == "" {
			return nil, fmt.Errorf("fixture %s[%d]: method (or an envelope with one) is required", p, i)
		}
		if fs[i].Expected != "" && !abi.ValidAction(fs[i].Expected) {
			return nil, fmt.Errorf("fixture %s[%d]: expected %q is not an action", p, i, fs[i].Expected)
		}
		if fs[i].Name == "" {
			fs[i].Name = fmt.Sprintf("%s#%d", fs[i].File, i)
		}
	}
	return fs, nil
}

// Envelope turns the fixture into an envelope (request phase unless the fixture gives one). A
// fixture's method and params are read through mcp.Parse, as a call from the wire would be; an
// envelope given whole is held to the same strict scan (mcp.Check) before it is decoded.
func (f Fixture) Envelope(id string) (*abi.Envelope, error) {
	if len(f.EnvelopeJSON) > 0 {
		if err := mcp.Check(f.EnvelopeJSON); err != nil {
			return nil, fmt.Errorf("fixture %s: envelope: %w", f.Name, err)
		}
		var env abi.Envelope
		if err := json.Unmarshal(f.EnvelopeJSON, &env); err != nil {
			return nil, fmt.Errorf("fixture %s: envelope: %w", f.Name, err)
		}
		if env.ABI == "" {
			env.ABI = abi.Version
		}
		if env.Phase == "" {
			env.Phase = abi.PhaseRequest
		}
		if env.ID == "" {
			env.ID = id
		}
		return &env, nil
	}
	m := &mcp.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: f.Method, Params: f.Params}
	env, err := mcp.NewEnvelope(m, mcp.Context{Transport: "fixture", Server: f.Server, Agent: f.Agent, Cwd: f.Cwd, Principal: f.Principal})
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", f.Name, err)
	}
	env.ID = id
	return env, nil
}

// RunFixtures evaluates every fixture in dir and fails on the first mismatch.
func (b *Bundle) RunFixtures(ctx context.Context, dir string) error {
	fs, err := ReadFixtures(dir)
	if err != nil {
		return err
	}
	return b.evalFixtures(ctx, fs)
}

// runFixtures runs the fixtures in the bundle's folder rel (each *.json file directly in it), read
// through read (Build's pinned reader: only files the digest listed, with those bytes).
func (b *Bundle) runFixtures(ctx context.Context, rel string, read func(rel string) ([]byte, error), files []string) error {
	dir := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	var fs []Fixture
	for _, f := range files { // sorted
		if path.Dir(f) != dir || path.Ext(f) != ".json" {
			continue
		}
		raw, err := read(f)
		if err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		got, err := parseFixtures(filepath.Join(b.Dir, filepath.FromSlash(f)), raw)
		if err != nil {
			return err
		}
		fs = append(fs, got...)
	}
	return b.evalFixtures(ctx, fs)
}

// fixtureAttempts is how often a fixture is evaluated when its answer is wrong only because a
// stage failed (a timeout, a trap) and its failure mode decided: a stage's first call in a new
// instance on a loaded machine can run past its timeout (CI: the injection stage's first call,
// 250 ms, with two test binaries on two cores), and a bundle's self-test should not fail on the
// machine's load. A mismatch with no failed stage fails at once, and a stage that fails every
// time still fails the fixture: the retries never turn a failure into a pass.
const fixtureAttempts = 3

func (b *Bundle) evalFixtures(ctx context.Context, fs []Fixture) error {
	for _, f := range fs {
		for attempt := 1; ; attempt++ {
			// A new envelope each time: the chain replaces what a stage rewrote in it.
			env, err := f.Envelope("fixture")
			if err != nil {
				return fmt.Errorf("%w: %v", ErrFixture, err)
			}
			d, err := b.Chain.Evaluate(ctx, env)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrFixture, f.Name, err)
			}
			if f.Expected == "" || d.Action == f.Expected {
				break
			}
			if !d.StageFailed() {
				return fmt.Errorf("%w: %s: expected %s, got %s (%s)", ErrFixture, f.Name, f.Expected, d.Action, d.Reason)
			}
			if attempt == fixtureAttempts {
				return fmt.Errorf("%w: %s: expected %s, got %s (%s; a stage failed on each of %d attempts)", ErrFixture, f.Name, f.Expected, d.Action, d.Reason, attempt)
			}
		}
	}
	return nil
}

// FixtureMemo remembers, in one file, the bundles whose fixtures passed on this host (by
// digest and host version), so the one-process modes (proxy, hook, mcp: a process per session
// or call) do not rerun them on every start. The fixtures are the bundle's self-test, not its
// trust: the signature was checked before, and a bundle whose bytes change has another digest.
type FixtureMemo struct {
	Path string // host/gateway uses DATA_DIR/bundles/fixtures-passed.json
	Host string // the host's version: another build of palisade runs them again
	mu   sync.Mutex
}

// fixtureMemoMax bounds the file: past it the oldest entries go.
const fixtureMemoMax = 64

func (m *FixtureMemo) key(digest string) string { return digest + " " + m.Host }

func (m *FixtureMemo) read() []string {
	var keys []string
	if b, err := os.ReadFile(m.Path); err == nil {
		_ = json.Unmarshal(b, &keys) // unreadable: run the fixtures again
	}
	return keys
}

// Passed reports whether the fixtures of the bundle with digest passed on this host before.
func (m *FixtureMemo) Passed(digest string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.read(), m.key(digest))
}

// Record notes that the fixtures of the bundle with digest passed; a failure to write only
// costs the next start a rerun.
func (m *FixtureMemo) Record(digest string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.read()
	if slices.Contains(keys, m.key(digest)) {
		return
	}
	keys = append(keys, m.key(digest))
	if len(keys) > fixtureMemoMax {
		keys = keys[len(keys)-fixtureMemoMax:]
	}
	b, _ := json.Marshal(keys)
	if err := os.MkdirAll(filepath.Dir(m.Path), 0o700); err != nil {
		return
	}
	_ = atomicfile.Write(m.Path, b, 0o600) // a memo not written costs the next start a rerun
}
