package pin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Rule and Stage name the pin check in deny errors and audit events.
const (
	Rule  = "tool-pin"
	Stage = "pin"
)

// ErrNoChange is returned by Approve when the tool has no pending change.
var ErrNoChange = errors.New("pin: no pending change for this tool")

// Pin is a tool definition as first seen.
type Pin struct {
	Name         string    `json:"name"`
	Description  string    `json:"description"`   // as the server sent it, before sanitizing
	SchemaSHA256 string    `json:"schema_sha256"` // over the canonical inputSchema and outputSchema
	PinnedAt     time.Time `json:"pinned_at"`
}

// Change is a pinned tool whose definition changed; calls to it are denied until approved.
type Change struct {
	Server     string    `json:"server"`
	Tool       string    `json:"tool"`
	Fields     []string  `json:"fields"` // description, schema
	Old        Pin       `json:"old"`
	New        Pin       `json:"new"`
	DetectedAt time.Time `json:"detected_at"`
}

// Options configure a Pinner.
type Options struct {
	// Dir keeps one JSON file per server (pins and pending changes), so pins survive restarts
	// and separate stdio proxies never write the same file; "" = memory only.
	Dir      string
	Recorder engine.Recorder // receives tool.changed events; nil = none
	Gateway  string          // instance id in events
	Logger   *slog.Logger    // nil = discard
	Now      func() time.Time
}

// Pinner pins tool definitions per server. It is safe for concurrent use.
type Pinner struct {
	o       Options
	mu      sync.Mutex
	servers map[string]*serverPins
	// infos holds each server's tool definitions from its latest tools/list (description
	// sanitized, input schema verbatim), in memory only: ToolInfo hands them to detectors.
	infos map[string]map[string]abi.ToolInfo
}

type serverPins struct {
	Pins    map[string]Pin    `json:"pins"`
	Pending map[string]Change `json:"pending,omitempty"`
}

// New returns a Pinner.
func New(o Options) (*Pinner, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("pin: %w", err)
		}
	}
	return &Pinner{o: o, servers: map[string]*serverPins{}, infos: map[string]map[string]abi.ToolInfo{}}, nil
}

func (p *Pinner) file(server string) string {
	name := audit.SubjectToken(server)
	if name == "" {
		name = "_"
	}
	return filepath.Join(p.o.Dir, name+".json")
}

// load returns the server's pins, reading its file on first use. Call with mu held.
func (p *Pinner) load(server string) *serverPins {
	if sp, ok := p.servers[server]; ok {
		return sp
	}
	sp := &serverPins{Pins: map[string]Pin{}, Pending: map[string]Change{}}
	if p.o.Dir != "" {
		if b, err := os.ReadFile(p.file(server)); err == nil {
			if err := json.Unmarshal(b, sp); err != nil {
				p.o.Logger.Warn("pin file unreadable; starting empty", "upstream", server, "err", err)
				sp = &serverPins{}
			}
			if sp.Pins == nil {
				sp.Pins = map[string]Pin{}
			}
			if sp.Pending == nil {
				sp.Pending = map[string]Change{}
			}
		}
	}
	p.servers[server] = sp
	return sp
}

// save writes the server's file atomically. Call with mu held.
func (p *Pinner) save(server string, sp *serverPins) error {
	if p.o.Dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return err
	}
	f := p.file(server)
	tmp := f + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	return os.Rename(tmp, f)
}

// ObserveTools pins the tools of a tools/list result on first sight, records a change for each
// pinned tool whose definition differs, and returns the result with descriptions (and titles)
// sanitized. Unknown fields pass through.
func (p *Pinner) ObserveTools(ctx context.Context, server string, result json.RawMessage) (json.RawMessage, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return result, fmt.Errorf("pin: tools/list result: %w", err)
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(res["tools"], &tools); err != nil {
		return result, fmt.Errorf("pin: tools/list tools: %w", err)
	}
	now := p.o.Now().UTC()
	var changes []Change
	modified := false
	p.mu.Lock()
	sp := p.load(server)
	dirty := false
	for _, t := range tools {
		var name, desc string
		_ = json.Unmarshal(t["name"], &name)
		_ = json.Unmarshal(t["description"], &desc)
		if name == "" {
			continue
		}
		cur := Pin{Name: name, Description: desc, SchemaSHA256: schemaHash(t["inputSchema"], t["outputSchema"]), PinnedAt: now}
		if p.infos[server] == nil {
			p.infos[server] = map[string]abi.ToolInfo{}
		}
		info := abi.ToolInfo{Name: name, Description: Sanitize(desc)}
		if in := t["inputSchema"]; len(in) > 0 && in[0] == '{' {
			info.InputSchema = append(json.RawMessage(nil), in...)
		}
		p.infos[server][name] = info
		old, ok := sp.Pins[name]
		switch {
		case !ok:
			sp.Pins[name] = cur
			dirty = true
		case old.Description != cur.Description || old.SchemaSHA256 != cur.SchemaSHA256:
			var fields []string
			if old.Description != cur.Description {
				fields = append(fields, "description")
			}
			if old.SchemaSHA256 != cur.SchemaSHA256 {
				fields = append(fields, "schema")
			}
			if prev, ok := sp.Pending[name]; !ok || prev.New.Description != cur.Description || prev.New.SchemaSHA256 != cur.SchemaSHA256 {
				c := Change{Server: server, Tool: name, Fields: fields, Old: old, New: cur, DetectedAt: now}
				sp.Pending[name] = c
				changes = append(changes, c)
				dirty = true
			}
		default:
			if _, ok := sp.Pending[name]; ok {
				// The server went back to the pinned definition.
				delete(sp.Pending, name)
				dirty = true
			}
		}
		for _, k := range []string{"description", "title"} {
			var s string
			if json.Unmarshal(t[k], &s) != nil {
				continue
			}
			if clean := Sanitize(s); clean != s {
				t[k], _ = json.Marshal(clean)
				modified = true
			}
		}
		// Descriptions inside the schemas reach the model as much as the tool's own.
		for _, k := range []string{"inputSchema", "outputSchema"} {
			if clean, ok := sanitizeSchema(t[k]); ok {
				t[k] = clean
				modified = true
			}
		}
	}
	var serr error
	if dirty {
		serr = p.save(server, sp)
	}
	p.mu.Unlock()
	for _, c := range changes {
		p.o.Logger.Warn("tool definition changed; calls denied until approved", "upstream", server, "tool", c.Tool, "fields", c.Fields)
		p.record(ctx, c)
	}
	if !modified {
		return result, serr
	}
	tb, err := json.Marshal(tools)
	if err != nil {
		return result, err
	}
	res["tools"] = tb
	out, err := json.Marshal(res)
	if err != nil {
		return result, err
	}
	return out, serr
}

// ToolInfo returns what the server's latest tools/list said of tool (name, sanitized
// description, input schema), for the envelope's tool_info (ABI 1.1), or nil when the tool is
// unknown or its definition changed and awaits approval. It implements engine.ToolInfoSource.
func (p *Pinner) ToolInfo(server, tool string) *abi.ToolInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	info, ok := p.infos[server][tool]
	if !ok {
		return nil
	}
	if _, pending := p.load(server).Pending[tool]; pending {
		return nil
	}
	return &info
}

func (p *Pinner) record(ctx context.Context, c Change) {
	if p.o.Recorder == nil {
		return
	}
	detail, _ := json.Marshal(map[string]any{"change": c})
	p.o.Recorder.Record(ctx, audit.Event{
		ID: audit.NewID(), Time: c.DetectedAt, Kind: audit.KindToolChanged, Gateway: p.o.Gateway,
		Method: mcp.MethodToolsList, Server: c.Server, Tool: c.Tool, Action: abi.ActionDeny,
		Reason: "tool definition changed since pinned: " + joinFields(c.Fields), Rule: Rule, Stage: Stage,
		Detail: detail,
	})
}

func joinFields(f []string) string {
	var b bytes.Buffer
	for i, s := range f {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// CheckRequest implements engine.Check: a tools/call to a tool with a pending change is denied
// before any person is asked to approve it.
func (p *Pinner) CheckRequest(ctx context.Context, o *engine.Outcome) error {
	return p.AfterRequest(ctx, o)
}

// AfterRequest implements engine.Hook: a tools/call to a tool with a pending change is denied
// (checked again after a hold, for a change seen while the call waited).
func (p *Pinner) AfterRequest(_ context.Context, o *engine.Outcome) error {
	env := o.Envelope
	if env.Method != mcp.MethodToolsCall || env.Tool == "" {
		return nil
	}
	p.mu.Lock()
	c, changed := p.load(env.Server).Pending[env.Tool]
	p.mu.Unlock()
	if !changed {
		return nil
	}
	reason := fmt.Sprintf("the definition of tool %q changed (%s) since it was pinned; a person must approve the change", env.Tool, joinFields(c.Fields))
	var stages []abi.StageResult
	if o.Decision != nil {
		stages = o.Decision.Stages
	}
	o.Action = abi.ActionDeny
	o.Decision = &chain.Decision{Action: abi.ActionDeny, Reason: reason, Rule: Rule, Stage: Stage, Stages: stages}
	if o.Detail == nil {
		o.Detail = map[string]any{}
	}
	o.Detail["tool_change"] = c
	return nil
}

// Approve accepts a tool's pending change: the new definition becomes the pin.
func (p *Pinner) Approve(server, tool string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.load(server)
	c, ok := sp.Pending[tool]
	if !ok {
		return fmt.Errorf("%w: %s/%s", ErrNoChange, server, tool)
	}
	sp.Pins[tool] = c.New
	delete(sp.Pending, tool)
	return p.save(server, sp)
}

// Pending returns the server's pending changes, sorted by tool.
func (p *Pinner) Pending(server string) []Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Change
	for _, c := range p.load(server).Pending {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// Pins returns a copy of the server's pins.
func (p *Pinner) Pins(server string) map[string]Pin {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]Pin{}
	for k, v := range p.load(server).Pins {
		out[k] = v
	}
	return out
}

// schemaHash is the sha256 over the canonical JSON of the input and output schemas (object keys
// sorted, insignificant whitespace dropped), so reformatting is not a change.
func schemaHash(in, out json.RawMessage) string {
	h := sha256.New()
	for _, s := range []json.RawMessage{in, out} {
		var v any
		if len(s) > 0 && json.Unmarshal(s, &v) == nil {
			b, _ := json.Marshal(v)
			h.Write(b)
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

var (
	_ engine.Hook          = (*Pinner)(nil)
	_ engine.Check         = (*Pinner)(nil)
	_ engine.ToolsObserver = (*Pinner)(nil)
)

// sanitizeSchema sanitizes every description and title string inside a JSON Schema (property
// descriptions, nested definitions) and returns the schema and true if one changed. It walks
// with an explicit stack, so a deeply nested schema cannot exhaust the goroutine stack.
func sanitizeSchema(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"`)) {
		return raw, false
	}
	var root any
	if json.Unmarshal(raw, &root) != nil {
		return raw, false
	}
	changed := false
	stack := []any{root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "description" || k == "title") {
					if clean := Sanitize(s); clean != s {
						x[k] = clean
						changed = true
					}
					continue
				}
				stack = append(stack, c)
			}
		case []any:
			stack = append(stack, x...)
		}
	}
	if !changed {
		return raw, false
	}
	b, err := json.Marshal(root)
	if err != nil {
		return raw, false
	}
	return b, true
}

// Forget drops the pins held in memory, so the next call reads each server's file again: a
// long-lived process (the hook engine) calls it before each decision to see what other
// processes (palisade proxy, proxy approve) wrote since. Tool definitions from tools/list stay.
func (p *Pinner) Forget() {
	if p.o.Dir == "" {
		return // memory only: the map is the state
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.servers)
}
