package approval

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Signer signs decisions: an approver's NATS identity (*bus.Identity) satisfies it.
type Signer = audit.Signer

// Scopes of a decision: once applies to the held call only; session to later calls of the same
// session with the same server, tool and arguments; minutes to the same server, tool and
// arguments from any session for Decision.Minutes.
const (
	ScopeOnce    = "once"
	ScopeSession = "session"
	ScopeMinutes = "minutes"
)

// Deciders recorded when no person decided.
const (
	ByTimeout    = "timeout"             // the hold's timeout passed
	ByDisconnect = "client-disconnected" // the waiting client went away
	ByShutdown   = "gateway-shutdown"    // the holding gateway shut down (ReleaseAll)
	// ByElicitation prefixes who answered in the client (engine.Held.Ask):
	// "elicitation:<principal or client>".
	ByElicitation = "elicitation"
)

// Defaults for Options.
const (
	DefaultBucket        = "PALISADE_APPROVALS"
	DefaultTimeout       = 2 * time.Minute
	DefaultMaxTimeout    = time.Hour
	DefaultProgressEvery = 5 * time.Second
	// DefaultRecheck is Options.Recheck's default.
	DefaultRecheck = time.Second
	DefaultMinutes = 15
	// DecisionTTL is how long a signed decision may be applied after it was made.
	DecisionTTL = 10 * time.Minute
	// DefaultApproverName names Options.Signer's key when Approvers does not.
	DefaultApproverName = "approver"
	// SessionGrantTTL bounds a session-scoped grant: the gateway does not always see a session end.
	SessionGrantTTL = 24 * time.Hour
)

// Errors returned by Decide.
var (
	ErrNotFound    = errors.New("approval: no such held call")
	ErrDecided     = errors.New("approval: already decided")
	ErrBadDecision = errors.New("approval: invalid decision")
)

// Options configure a Manager.
type Options struct {
	// Conn shares held calls, decisions and grants with the fleet through a JetStream KV bucket;
	// nil = this gateway only.
	Conn *nats.Conn
	// Bucket is the KV bucket; "" = PALISADE_APPROVALS.
	Bucket string
	// Gateway is this instance's id, shown on held calls and approval events.
	Gateway string
	// Timeout is how long a call is held when its rule names none; 0 = 2m.
	Timeout time.Duration
	// MaxTimeout caps a rule's timeout; 0 = 1h.
	MaxTimeout time.Duration
	// OnTimeout is the action when nobody decides in time: allow or deny; "" = deny. A rule's
	// verdict metadata {"on_timeout": "allow"} overrides it.
	OnTimeout string
	// ProgressEvery is the interval of progress notifications to a waiting client; 0 = 5s.
	ProgressEvery time.Duration
	// Recheck is how often a held call reads its decision key straight from the bucket, besides
	// the watch; 0 = 1s. A watch whose consumer was lost with the bucket's stream leader (a
	// JetStream cluster failover) stalls until its heartbeats are missed; a decision does not
	// wait for that.
	Recheck time.Duration
	// HideArguments keeps tool arguments out of held-call listings (only their sha256 shows);
	// false = the person deciding sees them.
	HideArguments bool
	// Recorder receives one approval audit event per decided hold, and one approval.forged
	// event per decision or grant in the bucket that no trusted approver signed; nil = none.
	Recorder engine.Recorder
	// Signer signs the decisions and grants Decide writes (the approver identity, or the
	// gateway's approver key for its admin API); nil = unsigned, which other gateways ignore.
	Signer Signer
	// Approvers maps the public keys ("U...") of trusted approver identities to the name
	// recorded as decided_by. With Conn, a decision or grant read from the bucket counts only
	// when one of them signed it; anything else is ignored and audited as approval.forged.
	// Signer's key is added as "approver" unless listed.
	Approvers map[string]string
	// Bundle returns the active bundle: a decision is applied only while the bundle that asked
	// is still active (a swap in between denies the call). nil = not checked.
	Bundle func() chain.Info
	// Logger; nil = discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.OnTimeout != abi.ActionAllow {
		o.OnTimeout = abi.ActionDeny
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	if o.Recheck <= 0 {
		o.Recheck = DefaultRecheck
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	approvers := make(map[string]string, len(o.Approvers)+1)
	maps.Copy(approvers, o.Approvers)
	if o.Signer != nil {
		if _, ok := approvers[o.Signer.PublicKey()]; !ok {
			approvers[o.Signer.PublicKey()] = DefaultApproverName
		}
	}
	o.Approvers = approvers
	return o
}

// Pending is a held call as listings show it.
type Pending struct {
	ID              string            `json:"id"` // the decision's audit id
	Time            time.Time         `json:"time"`
	Expires         time.Time         `json:"expires"`
	OnTimeout       string            `json:"on_timeout"`
	Gateway         string            `json:"gateway,omitempty"`
	Method          string            `json:"method,omitempty"`
	Server          string            `json:"server,omitempty"`
	Session         string            `json:"session,omitempty"`
	Agent           string            `json:"agent,omitempty"`
	Tool            string            `json:"tool,omitempty"`
	Arguments       json.RawMessage   `json:"arguments,omitempty"`
	ArgumentsSHA256 string            `json:"arguments_sha256,omitempty"`
	BundleDigest    string            `json:"bundle_digest,omitempty"`
	BundleVersion   string            `json:"bundle_version,omitempty"`
	Reason          string            `json:"reason,omitempty"`
	Rule            string            `json:"rule,omitempty"`
	Stage           string            `json:"stage,omitempty"`
	Stages          []abi.StageResult `json:"stages,omitempty"`
	// Principal is who made the call (or asked for the permission): a grant given for it
	// applies only to that principal's later calls.
	Principal *abi.Principal `json:"principal,omitempty"`
	// Permission is set when this is a permission request (selfmcp requestPermission), not a
	// held call: what was asked for.
	Permission *PermissionRequest `json:"permission,omitempty"`
}

// PermissionRequest is a caller's request for a grant (selfmcp requestPermission): one tool of
// one server, with given arguments (their digest), or any arguments, for a scope. A person
// decides it as a held call; an allow becomes a grant bound to the caller's principal.
type PermissionRequest struct {
	Scope        string `json:"scope"`             // once, session or minutes
	Minutes      int    `json:"minutes,omitempty"` // for minutes; 0 = 15
	AnyArguments bool   `json:"any_arguments,omitempty"`
	Reason       string `json:"reason,omitempty"` // why the caller asks
}

// MethodPermission is the method of a permission request's queue entry and audit events.
const MethodPermission = "palisade/requestPermission"

// anyArguments is the arguments digest of a grant that covers every argument.
const anyArguments = "*"

// PrincipalKey names a principal for grants: "issuer#subject", "" for none.
func PrincipalKey(p *abi.Principal) string {
	if p == nil {
		return ""
	}
	return p.Issuer + "#" + p.Subject
}

// Call is the content a person was shown and approves: a decision and a grant sign it, and
// the holding gateway releases only a held call that still matches it.
type Call struct {
	Method          string `json:"method,omitempty"`
	Agent           string `json:"agent,omitempty"`
	Server          string `json:"server,omitempty"`
	Tool            string `json:"tool,omitempty"`
	Session         string `json:"session,omitempty"`
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
	BundleDigest    string `json:"bundle_digest,omitempty"`
	BundleVersion   string `json:"bundle_version,omitempty"`
	// Principal is PrincipalKey of the caller: a grant from this decision is theirs alone.
	Principal string `json:"principal,omitempty"`
}

// call is the content of p a decision signs. The arguments' digest is computed from the
// arguments shown when there are any, so an entry whose digest disagrees with them signs what
// the person saw.
func (p Pending) call() Call {
	sum := p.ArgumentsSHA256
	if len(p.Arguments) > 0 {
		sum = audit.ArgumentsHash(p.Arguments)
	}
	return Call{Method: p.Method, Agent: p.Agent, Server: p.Server, Tool: p.Tool, Session: p.Session,
		ArgumentsSHA256: sum, BundleDigest: p.BundleDigest, BundleVersion: p.BundleVersion, Principal: PrincipalKey(p.Principal)}
}

// Decision is a person's answer to a held call.
type Decision struct {
	Action  string    `json:"action"`                // allow or deny
	By      string    `json:"decided_by"`            // who decided; "" = "admin"
	Reason  string    `json:"reason,omitempty"`      // shown to the client on deny
	Scope   string    `json:"scope,omitempty"`       // once (""), session, minutes
	Minutes int       `json:"minutes,omitempty"`     // for scope minutes; 0 = 15
	Time    time.Time `json:"time,omitzero"`         // filled by Decide
	Gateway string    `json:"gateway,omitempty"`     // where it was decided
	Expires time.Time `json:"expires,omitzero"`      // after it the decision (or grant) is not applied
	ID      string    `json:"approval_id,omitempty"` // the held call decided (or that granted)
	// DecisionID names this decision; a gateway applies it once.
	DecisionID string `json:"decision_id,omitempty"`
	// Call is what the approver was shown and approves.
	Call   *Call  `json:"call,omitempty"`
	Key    string `json:"grant_key,omitempty"` // grants only: the grant's key
	Signer string `json:"signer,omitempty"`    // nkey public key of the approver who signed
	Sig    string `json:"sig,omitempty"`       // ed25519 over the decision without sig, base64
	// Identity is the person the deciding admin API verified (an identity provider's issuer
	// and subject, admin.Identity.String); signed with the decision, it is recorded as
	// decided_by in place of the signer's name. "" = none (a key holder's decision).
	Identity string `json:"identity,omitempty"`

	claimed string // By as written, before verification replaced it with the identity
	via     string // how the decision came when not through the queue (engine.Answer.Via)
}

// Validate checks and normalizes d.
func (d *Decision) Validate() error {
	if d.Action != abi.ActionAllow && d.Action != abi.ActionDeny {
		return fmt.Errorf("%w: action %q must be allow or deny", ErrBadDecision, d.Action)
	}
	switch d.Scope {
	case "":
		d.Scope = ScopeOnce
	case ScopeOnce, ScopeSession:
	case ScopeMinutes:
		if d.Minutes < 0 || d.Minutes > 7*24*60 {
			return fmt.Errorf("%w: minutes %d outside 0..10080", ErrBadDecision, d.Minutes)
		}
		if d.Minutes == 0 {
			d.Minutes = DefaultMinutes
		}
	default:
		return fmt.Errorf("%w: scope %q must be once, session or minutes", ErrBadDecision, d.Scope)
	}
	if d.By == "" {
		d.By = "admin"
	}
	return nil
}

// Change is one update of the queue, for live views.
type Change struct {
	Type       string             `json:"type"` // held or resolved
	ID         string             `json:"id"`
	Pending    *Pending           `json:"pending,omitempty"`
	Resolution *engine.Resolution `json:"resolution,omitempty"`
}

type hold struct {
	p    Pending
	done chan struct{}
	once sync.Once
	d    Decision // set before done closes
}

// resolved reports whether the call has been decided.
func (h *hold) resolved() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

func (h *hold) resolve(d Decision) bool {
	ok := false
	h.once.Do(func() {
		h.d = d
		close(h.done)
		ok = true
	})
	return ok
}

// Manager holds calls and resolves them. It implements engine.Approver and is safe for concurrent
// use.
type Manager struct {
	o   Options
	kv  jetstream.KeyValue // nil = local only
	log *slog.Logger

	mu     sync.Mutex
	held   map[string]*hold    // held here
	fleet  map[string]Pending  // held anywhere (from the bucket)
	grants map[string]Decision // by grant key
	subs   map[chan Change]struct{}
	// writing holds ids whose decision this process is writing (Decide, settle): the write's
	// own echo through the watch is not judged; the writer checks what won.
	writing map[string]int
	// released holds ids this gateway released, until the bucket's delete comes back through
	// the watch: a late echo of the call's own put must not list it again.
	released map[string]time.Time
	// used holds the ids of decisions applied here, until they expire: a decision is single use.
	used map[string]time.Time

	// applyMu serializes apply between the watch and recheck; taken before mu.
	applyMu sync.Mutex

	stop    context.CancelFunc
	watched chan struct{}
	done    chan struct{}
}

var _ engine.Approver = (*Manager)(nil)

// New returns a Manager. With o.Conn it creates or opens the KV bucket and starts watching it.
func New(ctx context.Context, o Options) (*Manager, error) {
	o = o.withDefaults()
	m := &Manager{
		o: o, log: o.Logger.With("component", "approval"),
		held: map[string]*hold{}, fleet: map[string]Pending{}, grants: map[string]Decision{}, released: map[string]time.Time{}, writing: map[string]int{}, used: map[string]time.Time{},
		subs: map[chan Change]struct{}{}, done: make(chan struct{}), watched: make(chan struct{}),
	}
	if o.Conn == nil {
		close(m.done)
		close(m.watched)
		return m, nil
	}
	js, err := jetstream.New(o.Conn)
	if err != nil {
		return nil, fmt.Errorf("approval: jetstream: %w", err)
	}
	kv, err := EnsureBucket(ctx, js, o.Bucket)
	if err != nil {
		return nil, err
	}
	m.kv = kv
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.stop = cancel
	w, err := watchAll(ctx, wctx, kv, m.log)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("approval: watch %s: %w", o.Bucket, err)
	}
	go m.watch(w)
	select {
	case <-m.watched:
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	return m, nil
}

// watchRetry bounds how long New tries to start its watch when ctx has no deadline.
const watchRetry = 30 * time.Second

// watchAll starts the bucket's watch (in wctx), trying again while ctx lasts (at most
// watchRetry when it has no deadline): while the bucket's stream elects a new leader (its
// server just went away) creating the watch's consumer times out, and an approver or a
// gateway that starts then should wait for the election, not fail.
func watchAll(ctx, wctx context.Context, kv jetstream.KeyValue, log *slog.Logger) (jetstream.KeyWatcher, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, watchRetry)
		defer cancel()
	}
	for {
		w, err := kv.WatchAll(wctx)
		if err == nil {
			return w, nil
		}
		log.Warn("approvals watch not started; trying again", "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// EnsureBucket opens the approvals KV bucket ("" = PALISADE_APPROVALS), creating it when it
// does not exist. It opens first: on an authenticated bus only the admin identity may create
// it (the gateway's bootstrap does, for its embedded server); gateways and approvers use it.
func EnsureBucket(ctx context.Context, js jetstream.JetStream, bucket string) (jetstream.KeyValue, error) {
	if bucket == "" {
		bucket = DefaultBucket
	}
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, BucketConfig(bucket, 0))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("approval: kv bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// BucketConfig is the approvals bucket's configuration ("" = PALISADE_APPROVALS) with replicas
// copies (0 = 1; 3 on a JetStream cluster survives the loss of one server).
func BucketConfig(bucket string, replicas int) jetstream.KeyValueConfig {
	if bucket == "" {
		bucket = DefaultBucket
	}
	return jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "Palisade held calls, decisions and grants",
		// Each key keeps its last writes, so every gateway's watch sees each one even
		// when they come in a burst: a forged decision overwritten at once is still
		// audited as approval.forged.
		History:  decisionHistory,
		TTL:      SessionGrantTTL + time.Hour,
		Replicas: max(replicas, 1),
	}
}

// Close stops watching the bucket. Held calls keep waiting for their timeout or client.
func (m *Manager) Close() error {
	if m.stop != nil {
		m.stop()
	}
	<-m.done
	return nil
}

// decisionHistory is how many writes per key the approvals bucket keeps.
const decisionHistory = 16

const (
	keyPending  = "pending."
	keyDecision = "decision."
	keyGrant    = "grant."
)

func (m *Manager) watch(w jetstream.KeyWatcher) {
	defer close(m.done)
	defer w.Stop()
	initial := true
	for e := range w.Updates() {
		if e == nil {
			if initial {
				initial = false
				close(m.watched)
			}
			continue
		}
		m.applyOne(e)
	}
	if initial {
		close(m.watched)
	}
}

// applyOne applies e, one entry at a time: the watch and recheck may both bring a decision, and
// the second must find the call resolved (not replay the decision as a forgery).
func (m *Manager) applyOne(e jetstream.KeyValueEntry) {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	m.apply(e)
}

// recheck reads the decision key of held call id and applies what is there.
func (m *Manager) recheck(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, m.o.Recheck)
	defer cancel()
	e, err := m.kv.Get(ctx, keyDecision+id)
	if err != nil {
		return // none yet (ErrKeyNotFound), or the bucket is failing over: the next tick
	}
	m.applyOne(e)
}

func (m *Manager) apply(e jetstream.KeyValueEntry) {
	key := e.Key()
	del := e.Operation() != jetstream.KeyValuePut
	if id, ok := strings.CutPrefix(key, keyPending); ok {
		if !del {
			m.mu.Lock()
			h := m.held[id]
			m.mu.Unlock()
			if h != nil && !sameEntry(e.Value(), h.p) {
				m.forgedEntry(h.p, e.Value(), e.Revision())
				return
			}
		}
		m.mu.Lock()
		_, had := m.fleet[id]
		_, gone := m.released[id]
		switch {
		case del:
			delete(m.fleet, id)
			delete(m.released, id)
		case gone:
			// The echo of a call this gateway already released.
		default:
			var p Pending
			if json.Unmarshal(e.Value(), &p) == nil {
				m.fleet[id] = p
			}
		}
		_, local := m.held[id]
		m.mu.Unlock()
		if local {
			return // Hold notifies for its own calls
		}
		switch {
		case del && had:
			m.notify(Change{Type: "resolved", ID: id})
		case !del && !had && !gone:
			m.notify(Change{Type: "held", ID: id, Pending: m.fleetPending(id)})
		}
		return
	}
	if id, ok := strings.CutPrefix(key, keyDecision); ok {
		if del {
			return
		}
		m.mu.Lock()
		h := m.held[id]
		mine := m.writing[id] > 0
		m.mu.Unlock()
		if h == nil || mine || h.resolved() {
			// Not held here, this process is writing it, or the call is already decided (the
			// echo of a decision applied here): nothing to release, and the first decision
			// stays in the bucket, where it makes a later decider's create fail.
			return
		}
		if d, ok := m.accept(h.p, id, "", e.Value()); ok {
			if _, why := m.release(h, d); why != "" {
				// Refused: the call goes back to waiting for a decision that signs it.
				m.dropDecision(id, e.Revision())
			}
		}
		return
	}
	if g, ok := strings.CutPrefix(key, keyGrant); ok {
		if del {
			m.mu.Lock()
			delete(m.grants, g)
			m.mu.Unlock()
			return
		}
		if d, ok := m.accept(Pending{}, "", g, e.Value()); ok {
			m.mu.Lock()
			m.grants[g] = d
			m.mu.Unlock()
		}
	}
}

func (m *Manager) fleetPending(id string) *Pending {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.fleet[id]; ok {
		return &p
	}
	return nil
}

// Subscribe returns a channel of queue changes and the func that ends the subscription. A slow
// reader misses changes rather than slowing holds: re-read List on every change.
func (m *Manager) Subscribe() (<-chan Change, func()) {
	ch := make(chan Change, 64)
	m.mu.Lock()
	m.subs[ch] = struct{}{}
	m.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.subs, ch)
			m.mu.Unlock()
		})
	}
}

func (m *Manager) notify(c Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- c:
		default:
		}
	}
}

// List returns the held calls, here and (with NATS) across the fleet, oldest first.
func (m *Manager) List() []Pending {
	m.mu.Lock()
	out := make([]Pending, 0, len(m.held)+len(m.fleet))
	seen := map[string]bool{}
	for id, h := range m.held {
		out = append(out, h.p)
		seen[id] = true
	}
	for id, p := range m.fleet {
		if !seen[id] {
			out = append(out, p)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Pending) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Get returns one held call.
func (m *Manager) Get(id string) (Pending, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.held[id]; ok {
		return h.p, true
	}
	p, ok := m.fleet[id]
	return p, ok
}

// Decide resolves the held call id. It returns ErrNotFound when no gateway holds it, ErrDecided
// when a decision was already made, and an error wrapping ErrBadDecision for an invalid d.
func (m *Manager) Decide(ctx context.Context, id string, d Decision) error {
	return m.decide(ctx, id, d, nil)
}

// decide is Decide; shown, when set, is the queue entry the person saw (tests: an entry
// rewritten after this process read it).
func (m *Manager) decide(ctx context.Context, id string, d Decision, shown *Pending) error {
	if d.Scope == "" {
		// A permission request: the person grants what was asked unless they say otherwise.
		if p, ok := m.Get(id); ok && p.Permission != nil {
			d.Scope, d.Minutes = p.Permission.Scope, p.Permission.Minutes
		}
	}
	if err := d.Validate(); err != nil {
		return err
	}
	d.Time = time.Now().UTC()
	if d.Gateway == "" {
		d.Gateway = m.o.Gateway
	}
	d.ID, d.Key, d.Signer, d.Sig = id, "", "", ""
	d.DecisionID, d.Expires = audit.NewID(), d.Time.Add(DecisionTTL)
	m.mu.Lock()
	h := m.held[id]
	p, inFleet := m.fleet[id]
	m.writing[id]++
	m.mu.Unlock()
	defer m.doneWriting(id)
	if h != nil {
		p = h.p
	}
	if h == nil && !inFleet && m.kv != nil {
		// Held elsewhere moments ago: the watch may not have brought it yet.
		if e, err := m.kv.Get(ctx, keyPending+id); err == nil && json.Unmarshal(e.Value(), &p) == nil {
			inFleet = true
		}
	}
	if h == nil && !inFleet {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	// The decision signs what this process shows: the holding gateway's own record when it
	// holds the call, else the queue entry (which the holding gateway checks).
	if shown != nil {
		p = *shown
	}
	call := p.call()
	d.Call = &call
	if m.o.Signer != nil {
		if err := m.sign(&d); err != nil {
			return err
		}
	}
	local := d.verified(m.o.Approvers[d.Signer])
	if m.kv != nil {
		b, _ := json.Marshal(d)
		if err := m.write(ctx, p, h, id, b); err != nil {
			if errors.Is(err, ErrDecided) || h == nil {
				return err
			}
			// NATS is unreachable but the call is held here: decide it here rather than leave
			// the person unable to answer a waiting client.
			m.log.Warn("decided without the fleet (nats unreachable)", "audit_id", id, "err", err)
		}
	}
	if h != nil {
		if applied, _ := m.release(h, local); !applied && m.kv == nil {
			return fmt.Errorf("%w: %s", ErrDecided, id)
		}
	}
	switch {
	case p.Permission != nil && d.Action == abi.ActionAllow:
		m.grant(ctx, p, local, id) // once included: one later call
	case p.Permission == nil && d.Scope != ScopeOnce:
		m.grant(ctx, p, local, id)
	}
	m.log.Info("held call decided", "audit_id", id, "action", d.Action, "decided_by", local.By, "scope", d.Scope)
	return nil
}

// write creates the decision entry for id. When one is there already, a trusted one wins (and
// resolves h, ErrDecided); a forgery is audited and replaced, so that writing junk first cannot
// block an approver.
func (m *Manager) write(ctx context.Context, p Pending, h *hold, id string, b []byte) error {
	_, err := m.kv.Create(ctx, keyDecision+id, b)
	if !errors.Is(err, jetstream.ErrKeyExists) {
		if err != nil {
			return fmt.Errorf("approval: decide %s: %w", id, err)
		}
		return nil
	}
	e, err := m.kv.Get(ctx, keyDecision+id)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrDecided, id)
	}
	if won, ok := m.accept(p, id, "", e.Value()); ok {
		if h == nil {
			return fmt.Errorf("%w: %s", ErrDecided, id)
		}
		if _, why := m.release(h, won); why == "" {
			return fmt.Errorf("%w: %s", ErrDecided, id)
		}
		// Refused (other content, replayed, expired): replaced like a forgery.
	}
	if _, err := m.kv.Update(ctx, keyDecision+id, b, e.Revision()); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("%w: %s", ErrDecided, id)
		}
		return fmt.Errorf("approval: decide %s: replace forged decision: %w", id, err)
	}
	return nil
}

func (m *Manager) doneWriting(id string) {
	m.mu.Lock()
	if m.writing[id]--; m.writing[id] <= 0 {
		delete(m.writing, id)
	}
	m.mu.Unlock()
}

// signedBytes is what a decision's signature covers: its JSON without sig.
func signedBytes(d Decision) []byte {
	d.Sig = ""
	b, _ := json.Marshal(d)
	return b
}

// sign fills d.Signer and d.Sig with the manager's signer.
func (m *Manager) sign(d *Decision) error {
	d.Signer, d.Sig = m.o.Signer.PublicKey(), ""
	sig, err := m.o.Signer.Sign(signedBytes(*d))
	if err != nil {
		return fmt.Errorf("approval: sign decision: %w", err)
	}
	d.Sig = base64.StdEncoding.EncodeToString(sig)
	return nil
}

// verified returns d as decided by the identity name (its signer's; "" = unsigned): By becomes
// name, or name:by when the approver gave a person's name; the written By is kept aside.
func (d Decision) verified(name string) Decision {
	d.claimed = d.By
	switch {
	case d.Identity != "" && (name != "" || d.Signer == ""):
		// Signed by a trusted approver key (or decided here, unsigned), which vouches for
		// the person the admin API verified.
		d.By = d.Identity
	case name == "":
	case d.By == "" || d.By == name:
		d.By = name
	default:
		d.By = name + ":" + d.By
	}
	return d
}

// Why a decision or grant from the bucket was refused (audit reason of approval.forged).
const (
	forgedUnsigned  = "not signed by a trusted approver"
	forgedSignature = "bad signature"
	forgedTarget    = "signed for another held call or grant"
	forgedInvalid   = "invalid decision"
)

// accept checks raw, a decision for held call id (or grant key when grant is set) read from
// the bucket: it returns the decision with By set to the verified identity, or records an
// approval.forged event and returns false.
func (m *Manager) accept(p Pending, id, grant string, raw []byte) (Decision, bool) {
	var (
		d       Decision
		why     string
		name    string
		trusted bool
	)
	switch {
	case json.Unmarshal(raw, &d) != nil:
		why = forgedInvalid
	case d.Sig == "" || d.Signer == "":
		why = forgedUnsigned
	default:
		name, trusted = m.o.Approvers[d.Signer]
		switch {
		case !trusted:
			why = forgedUnsigned
		case !audit.VerifySignature(d.Signer, signedBytes(d), d.Sig):
			why = forgedSignature
		case grant != "" && d.Key != grant || grant == "" && d.ID != id:
			why = forgedTarget
		case d.Validate() != nil:
			why = forgedInvalid
		}
	}
	if why == "" {
		return d.verified(name), true
	}
	target := id
	if grant != "" {
		target = "grant " + grant
	}
	m.forged(p, orStr(id, d.ID), d, why+" ("+target+")")
	return Decision{}, false
}

// forged logs and audits as approval.forged something in the bucket that was not applied to
// the held call id: a decision d (zero for a queue entry), and why.
func (m *Manager) forged(p Pending, id string, d Decision, why string) {
	m.log.Warn("forged approval entry ignored", "audit_id", id, "why", why, "decision_id", d.DecisionID, "claimed_by", d.By, "signer", d.Signer)
	if m.o.Recorder == nil {
		return
	}
	m.o.Recorder.Record(context.Background(), audit.Event{
		ID: audit.NewID(), Time: time.Now().UTC(), Kind: audit.KindApproval, Gateway: m.o.Gateway,
		Method: p.Method, Server: p.Server, Session: p.Session, Agent: p.Agent, Tool: p.Tool,
		ArgumentsSHA256: p.ArgumentsSHA256, Action: d.Action, RequestedAction: abi.ActionAsk,
		Reason: why, Rule: p.Rule, Stage: p.Stage,
		Bundle:   bundleOf(p),
		Approval: &audit.Approval{ID: id, Decision: audit.ApprovalForged, ClaimedBy: orStr(d.claimed, d.By), Signer: d.Signer, Scope: d.Scope, DecisionID: d.DecisionID},
	})
}

func bundleOf(p Pending) *audit.Bundle {
	if p.BundleDigest == "" && p.BundleVersion == "" {
		return nil
	}
	return &audit.Bundle{Version: p.BundleVersion, Digest: p.BundleDigest}
}

// Why the holding gateway did not apply a trusted approver's decision (approval.forged).
const (
	forgedContent = "signed for other content than the held call"
	forgedExpired = "decision expired"
	forgedReplay  = "decision already used"
	forgedQueue   = "queue entry differs from the held call"
)

// release applies d, a verified decision for h, only when it signs h's own record of the call
// (its content and the bundle that asked), is unexpired and was not applied before. A refused
// decision is audited as approval.forged with its decision id and h stays held (why says
// why). When the bundle that asked is no longer the active one, the call is denied instead of
// released. applied reports whether d (or that denial) resolved h.
func (m *Manager) release(h *hold, d Decision) (applied bool, why string) {
	now := time.Now()
	m.mu.Lock()
	switch {
	case d.Call == nil || *d.Call != h.p.call():
		why = forgedContent
	case d.DecisionID == "" || d.Expires.IsZero() || now.After(d.Expires):
		why = forgedExpired
	default:
		if _, ok := m.used[d.DecisionID]; ok {
			why = forgedReplay
			break
		}
		for k, exp := range m.used {
			if now.After(exp) {
				delete(m.used, k)
			}
		}
		m.used[d.DecisionID] = d.Expires
	}
	m.mu.Unlock()
	if why != "" {
		m.forged(h.p, h.p.ID, d, why+" ("+h.p.ID+")")
		return false, why
	}
	if m.o.Bundle != nil {
		if cur := m.o.Bundle(); cur.Digest != h.p.BundleDigest {
			m.log.Warn("approval not applied: the bundle changed since the call was held", "audit_id", h.p.ID,
				"decision_id", d.DecisionID, "held_under", h.p.BundleDigest, "active", cur.Digest)
			d.Action, d.Scope = abi.ActionDeny, ScopeOnce
			d.Reason = fmt.Sprintf("the bundle changed since the call was held (%s, now %s %s): decision %s not applied",
				orStr(h.p.BundleVersion, h.p.BundleDigest), cur.Version, cur.Digest, d.DecisionID)
		}
	}
	return h.resolve(d), ""
}

// dropDecision removes a refused decision at revision rev, so that the approver can decide again.
func (m *Manager) dropDecision(id string, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.kv.Delete(ctx, keyDecision+id, jetstream.LastRevision(rev)); err != nil {
		m.log.Debug("refused decision not removed", "audit_id", id, "err", err)
	}
}

// sameEntry reports whether raw, a queue entry from the bucket, says what p says.
func sameEntry(raw []byte, p Pending) bool {
	var q Pending
	if json.Unmarshal(raw, &q) != nil {
		return false
	}
	a, _ := json.Marshal(q)
	b, _ := json.Marshal(p)
	return string(a) == string(b)
}

// forgedEntry handles a queue entry (revision rev) that disagrees with p, the call held here:
// it is audited as approval.forged and replaced by p, so approvers are shown the held call.
func (m *Manager) forgedEntry(p Pending, raw []byte, rev uint64) {
	var q Pending
	shown := "junk"
	if json.Unmarshal(raw, &q) == nil {
		shown = strings.TrimSpace(q.Method + " " + q.Server + " " + q.Tool)
	}
	m.forged(p, p.ID, Decision{}, fmt.Sprintf("%s (%s): it showed %q", forgedQueue, p.ID, shown))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, _ := json.Marshal(p)
	if _, err := m.kv.Update(ctx, keyPending+p.ID, b, rev); err != nil {
		m.log.Warn("forged queue entry not replaced", "audit_id", p.ID, "err", err)
	}
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (m *Manager) grant(ctx context.Context, p Pending, d Decision, id string) {
	g := d // already verified: By is the identity
	g.ID = id
	args := p.ArgumentsSHA256
	if p.Permission != nil && p.Permission.AnyArguments {
		args = anyArguments
	}
	key := grantKey(d.Scope, p.Server, p.Tool, args, p.Session, PrincipalKey(p.Principal))
	switch d.Scope {
	case ScopeSession:
		g.Expires = d.Time.Add(SessionGrantTTL)
	case ScopeOnce:
		g.Expires = d.Time.Add(DefaultMinutes * time.Minute) // a permission's one later call
	default:
		g.Expires = d.Time.Add(time.Duration(d.Minutes) * time.Minute)
	}
	m.mu.Lock()
	m.grants[key] = g
	m.mu.Unlock()
	if m.kv != nil {
		if m.o.Signer == nil {
			m.log.Warn("grant not shared: no approver key to sign it", "audit_id", id)
			return
		}
		w := g
		w.By, w.Key = d.claimed, key
		if err := m.sign(&w); err != nil {
			m.log.Warn("grant not shared", "audit_id", id, "err", err)
			return
		}
		b, _ := json.Marshal(w)
		if _, err := m.kv.Put(ctx, keyGrant+key, b); err != nil {
			m.log.Warn("grant not shared", "audit_id", id, "err", err)
		}
	}
}

// grantKey names the calls a scoped decision covers: one principal's (PrincipalKey) calls of
// one tool with one arguments digest (or anyArguments), in one session for scope session.
func grantKey(scope, server, tool, argsHash, session, principal string) string {
	h := sha256.New()
	for _, s := range []string{scope, server, tool, argsHash, principal} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if scope == ScopeSession {
		h.Write([]byte(session))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (m *Manager) findGrant(p Pending, now time.Time) (Decision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	who := PrincipalKey(p.Principal)
	for _, scope := range []string{ScopeSession, ScopeMinutes, ScopeOnce} {
		if scope == ScopeSession && p.Session == "" {
			continue
		}
		for _, args := range []string{p.ArgumentsSHA256, anyArguments} {
			k := grantKey(scope, p.Server, p.Tool, args, p.Session, who)
			g, ok := m.grants[k]
			if !ok {
				continue
			}
			if now.After(g.Expires) {
				delete(m.grants, k)
				continue
			}
			if g.Call == nil || g.Call.BundleDigest != p.BundleDigest || g.Call.Principal != who {
				continue // granted under another bundle, or to another principal: ask again
			}
			if scope == ScopeOnce {
				delete(m.grants, k) // used up: here now, in the fleet's bucket as soon as it is deleted there
				if m.kv != nil {
					go m.dropGrant(k)
				}
			}
			return g, true
		}
	}
	return Decision{}, false
}

// dropGrant deletes a used-up grant from the bucket (best effort: until the delete reaches
// another gateway, it may apply the grant once more).
func (m *Manager) dropGrant(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.kv.Delete(ctx, keyGrant+key); err != nil {
		m.log.Warn("used once-grant not removed from the fleet", "grant", key, "err", err)
	}
}

// holdRule is what the deciding stage's verdict metadata may say about the hold.
type holdRule struct {
	Timeout   string `json:"timeout"`
	OnTimeout string `json:"on_timeout"`
}

// ruleTimeout reads {"timeout": "30s", "on_timeout": "allow"} from the deciding stage's verdict.
func (m *Manager) ruleTimeout(d *chain.Decision) (time.Duration, string) {
	timeout, on := m.o.Timeout, m.o.OnTimeout
	if d == nil {
		return timeout, on
	}
	for _, s := range d.Stages {
		if s.Stage != d.Stage || s.Verdict == nil || len(s.Verdict.Metadata) == 0 {
			continue
		}
		var r holdRule
		if json.Unmarshal(s.Verdict.Metadata, &r) != nil {
			continue
		}
		if t, err := time.ParseDuration(r.Timeout); err == nil && t > 0 {
			timeout = min(t, m.o.MaxTimeout)
		}
		if r.OnTimeout == abi.ActionAllow || r.OnTimeout == abi.ActionDeny {
			on = r.OnTimeout
		}
	}
	return timeout, on
}

// pending describes held as a Pending call with id, held from now.
func (m *Manager) pending(held engine.Held, id string, now time.Time) Pending {
	env := held.Envelope
	timeout, onTimeout := m.ruleTimeout(held.Decision)
	p := Pending{
		ID: id, Time: now, Expires: now.Add(timeout), OnTimeout: onTimeout, Gateway: m.o.Gateway,
		Method: env.Method, Server: env.Server, Session: env.Session, Agent: env.Agent, Tool: env.Tool,
	}
	if p.Tool == "" {
		p.Tool = env.Prompt + env.URI
	}
	if len(env.Arguments) > 0 {
		p.ArgumentsSHA256 = audit.ArgumentsHash(env.Arguments)
		if !m.o.HideArguments {
			p.Arguments = env.Arguments
		}
	}
	if d := held.Decision; d != nil {
		p.Reason, p.Rule, p.Stage, p.Stages = d.Reason, d.Rule, d.Stage, d.Stages
	}
	p.BundleDigest, p.BundleVersion = held.Bundle.Digest, held.Bundle.Version
	p.Principal = env.Principal
	return p
}

// Granted resolves held by a grant a person gave earlier (scope session or minutes), without
// holding it: the hook path, whose person is Claude Code's own prompt, asks for the rest.
func (m *Manager) Granted(_ context.Context, held engine.Held) (engine.Resolution, bool) {
	if held.Envelope == nil {
		return engine.Resolution{}, false
	}
	p := m.pending(held, held.AuditID, time.Now().UTC())
	g, ok := m.findGrant(p, p.Time)
	if !ok {
		return engine.Resolution{}, false
	}
	return engine.Resolution{Action: g.Action, DecidedBy: g.By, Reason: g.Reason, Scope: g.Scope, ID: g.ID}, true
}

// Hold implements engine.Approver: it blocks until the call is decided, times out or ctx ends
// (the client went away: the call is denied and audited as client-disconnected). It returns an
// error only when the call could not be held.
func (m *Manager) Hold(ctx context.Context, held engine.Held) (engine.Resolution, error) {
	return m.hold(ctx, held, nil, "")
}

// RequestPermission holds a permission request (selfmcp requestPermission) until a person
// decides it, exactly as a held call: env is a tools/call of the tool asked for, with the
// asking principal (who may be granted) and the arguments (or none, with r.AnyArguments, or
// their digest argsSHA256 alone). An allow becomes a grant for r's scope, bound to
// env.Principal: only that principal's later calls on that server and tool (and arguments)
// are released by it, under bundle b. The timeout and on_timeout are the manager's (on_timeout
// is always deny for a request). Audited as an approval event naming who asked (principal)
// and who decided.
func (m *Manager) RequestPermission(ctx context.Context, env *abi.Envelope, b chain.Info, r PermissionRequest, argsSHA256 string, progress func(string)) (engine.Resolution, error) {
	switch r.Scope {
	case "":
		r.Scope = ScopeOnce
	case ScopeOnce, ScopeSession:
	case ScopeMinutes:
		if r.Minutes < 0 || r.Minutes > 7*24*60 {
			return engine.Resolution{}, fmt.Errorf("%w: minutes %d outside 0..10080", ErrBadDecision, r.Minutes)
		}
		if r.Minutes == 0 {
			r.Minutes = DefaultMinutes
		}
	default:
		return engine.Resolution{}, fmt.Errorf("%w: scope %q must be once, session or minutes", ErrBadDecision, r.Scope)
	}
	held := engine.Held{AuditID: audit.NewID(), Envelope: env, Bundle: b, Progress: progress,
		Decision: &chain.Decision{Action: abi.ActionAsk, Reason: orStr(r.Reason, "permission requested")}}
	return m.hold(ctx, held, &r, argsSHA256)
}

// hold is Hold, or RequestPermission when req is set.
func (m *Manager) hold(ctx context.Context, held engine.Held, req *PermissionRequest, argsSHA256 string) (engine.Resolution, error) {
	if held.Envelope == nil {
		return engine.Resolution{}, errors.New("approval: hold without envelope")
	}
	id := held.AuditID
	if id == "" {
		id = audit.NewID()
	}
	now := time.Now().UTC()
	p := m.pending(held, id, now)
	if req != nil {
		p.Method, p.Permission, p.OnTimeout = MethodPermission, req, abi.ActionDeny
		if argsSHA256 != "" {
			p.Arguments, p.ArgumentsSHA256 = nil, argsSHA256
		}
		if req.AnyArguments {
			p.Arguments, p.ArgumentsSHA256 = nil, ""
		}
	}
	timeout, onTimeout := p.Expires.Sub(now), p.OnTimeout
	if g, ok := m.findGrant(p, now); ok && req == nil {
		m.log.Debug("held call resolved by grant", "audit_id", id, "grant", g.ID)
		return engine.Resolution{Action: g.Action, DecidedBy: g.By, Reason: g.Reason, Scope: g.Scope, ID: g.ID}, nil
	}

	if held.Waiting != nil {
		held.Waiting() // the engine records the held call before anyone can see it queued
	}
	h := &hold{p: p, done: make(chan struct{})}
	m.mu.Lock()
	m.held[id] = h
	m.mu.Unlock()
	if m.kv != nil {
		b, _ := json.Marshal(p)
		if _, err := m.kv.Put(ctx, keyPending+id, b); err != nil {
			m.log.Warn("held call not shared with the fleet", "audit_id", id, "err", err)
		}
	}
	m.log.Info("call held for approval", "audit_id", id, "tool", p.Tool, "server", p.Server, "timeout", timeout)
	m.notify(Change{Type: "held", ID: id, Pending: &p})

	progress := func() {
		if held.Progress != nil {
			left := time.Until(p.Expires).Round(time.Second)
			held.Progress(fmt.Sprintf("waiting for approval %s (%s left)", id, left))
		}
	}
	progress()
	tick := time.NewTicker(m.o.ProgressEvery)
	defer tick.Stop()
	var recheck <-chan time.Time
	if m.kv != nil {
		rt := time.NewTicker(m.o.Recheck)
		defer rt.Stop()
		recheck = rt.C
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	actx, stopAsking := context.WithCancel(ctx)
	defer stopAsking()
	if req != nil {
		held.Ask = nil
	}
	answers, asked := m.ask(actx, held, id)
	defer func() {
		// The question ends before the hold returns (the transport may tell the client to stop
		// asking, and must do so before it answers the call); a question stuck writing to the
		// client is not waited on for long.
		stopAsking()
		select {
		case <-asked:
		case <-time.After(time.Second):
		}
	}()
	var d Decision
wait:
	for {
		select {
		case <-h.done:
			d = h.d
			break wait
		case a := <-answers:
			// The person at the client answered: applied like a decision, through the same
			// create, so a decision made in the dashboard meanwhile wins.
			d = m.settle(context.WithoutCancel(ctx), h, Decision{Action: a.Action, By: ByElicitation + ":" + a.By, Reason: a.Reason, via: a.Via})
			break wait
		case <-tick.C:
			progress()
		case <-recheck:
			m.recheck(ctx, id)
		case <-timer.C:
			d = m.settle(context.WithoutCancel(ctx), h, Decision{Action: onTimeout, By: ByTimeout, Reason: "nobody decided within " + timeout.String()})
			break wait
		case <-ctx.Done():
			d = m.settle(context.WithoutCancel(ctx), h, Decision{Action: abi.ActionDeny, By: ByDisconnect, Reason: "client went away while the call was held"})
			break wait
		}
	}
	m.mu.Lock()
	delete(m.held, id)
	delete(m.fleet, id)
	if m.kv != nil {
		now := time.Now()
		for rid, at := range m.released {
			if now.Sub(at) > 10*time.Minute {
				delete(m.released, rid) // its delete never came back (NATS was down)
			}
		}
		m.released[id] = now
	}
	m.mu.Unlock()
	if m.kv != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := m.kv.Delete(cctx, keyPending+id); err != nil {
			m.log.Warn("held call not removed from the fleet", "audit_id", id, "err", err)
		}
		cancel()
	}
	res := engine.Resolution{Action: d.Action, DecidedBy: d.By, Reason: d.Reason, Scope: d.Scope, ID: id, Via: d.via}
	if res.Scope == "" {
		res.Scope = ScopeOnce
	}
	m.record(ctx, p, res, d)
	m.notify(Change{Type: "resolved", ID: id, Resolution: &res})
	return res, nil
}

// ask puts held to the person at the client (held.Ask) while it waits in the queue; the
// channel brings their answer, or nothing when there is none (the queue decides then). The
// question ends with ctx, or when the hold returns (the queue, a timeout or a disconnect came
// first). A permission request is never asked in the client: it is the client asking.
// done closes when the question has ended.
func (m *Manager) ask(ctx context.Context, held engine.Held, id string) (answers <-chan engine.Answer, done <-chan struct{}) {
	ch, end := make(chan engine.Answer, 1), make(chan struct{})
	if held.Ask == nil {
		close(end)
		return ch, end
	}
	held.AuditID = id
	go func() {
		defer close(end)
		a, err := held.Ask(ctx, held)
		switch {
		case err != nil:
			m.log.Debug("no answer in the client: the queue decides", "audit_id", id, "err", err)
		case a.Action != abi.ActionAllow && a.Action != abi.ActionDeny:
			m.log.Warn("answer in the client ignored", "audit_id", id, "action", a.Action)
		default:
			ch <- a
		}
	}()
	return ch, end
}

// ReleaseAll denies every call held on this gateway, as decided by ByShutdown, unless a decision
// is already in: at shutdown, so waiting clients get an answer and each release is audited while
// the audit publisher still runs. Calls held afterwards wait as usual.
func (m *Manager) ReleaseAll(ctx context.Context, reason string) {
	m.mu.Lock()
	hs := make([]*hold, 0, len(m.held))
	for _, h := range m.held {
		hs = append(hs, h)
	}
	m.mu.Unlock()
	for _, h := range hs {
		m.settle(ctx, h, Decision{Action: abi.ActionDeny, By: ByShutdown, Reason: reason})
	}
}

// settle resolves h with d unless a decision is already there (here or in the bucket); it
// returns the decision that won.
func (m *Manager) settle(ctx context.Context, h *hold, d Decision) Decision {
	d.Time = time.Now().UTC()
	d.Gateway = m.o.Gateway
	d.Scope = ScopeOnce
	d.ID = h.p.ID
	if m.kv != nil {
		m.mu.Lock()
		m.writing[h.p.ID]++
		m.mu.Unlock()
		defer m.doneWriting(h.p.ID)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		b, _ := json.Marshal(d)
		if _, err := m.kv.Create(cctx, keyDecision+h.p.ID, b); errors.Is(err, jetstream.ErrKeyExists) {
			if e, err := m.kv.Get(cctx, keyDecision+h.p.ID); err == nil {
				won, ok := m.accept(h.p, h.p.ID, "", e.Value())
				if why := ""; ok {
					_, why = m.release(h, won)
					ok = why == ""
				}
				if !ok {
					_, _ = m.kv.Update(cctx, keyDecision+h.p.ID, b, e.Revision())
				}
			}
		}
	}
	h.resolve(d)
	return h.d
}

func (m *Manager) record(ctx context.Context, p Pending, res engine.Resolution, d Decision) {
	if m.o.Recorder == nil {
		return
	}
	word := audit.ApprovalDenied
	switch {
	case res.DecidedBy == ByTimeout:
		word = audit.ApprovalTimeout
	case res.Action == abi.ActionAllow:
		word = audit.ApprovalApproved
	}
	m.o.Recorder.Record(context.WithoutCancel(ctx), audit.Event{
		ID: audit.NewID(), Time: time.Now().UTC(), Kind: audit.KindApproval, Gateway: m.o.Gateway,
		Method: p.Method, Server: p.Server, Session: p.Session, Agent: p.Agent, Tool: p.Tool,
		ArgumentsSHA256: p.ArgumentsSHA256, Action: res.Action, RequestedAction: abi.ActionAsk,
		Reason: res.Reason, Rule: p.Rule, Stage: p.Stage,
		Principal: p.Principal,
		Approval:  &audit.Approval{ID: p.ID, DecidedBy: res.DecidedBy, Decision: word, Scope: res.Scope, Signer: d.Signer, ClaimedBy: claimedIfOther(d), DecisionID: d.DecisionID},
		Detail:    viaDetail(d.via),
	})
}

// viaDetail is an approval event's detail for a decision that came by via ("" = the queue:
// none).
func viaDetail(via string) json.RawMessage {
	if via == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"via": via})
	return b
}

// claimedIfOther is the By an approver wrote when verification replaced it with more.
func claimedIfOther(d Decision) string {
	if d.claimed == d.By {
		return ""
	}
	return d.claimed
}
