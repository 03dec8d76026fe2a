package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/internal/atomicfile"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/chain"
)

// Recorder receives audit events (host/audit.Publisher implements it).
type Recorder interface {
	Record(ctx context.Context, ev audit.Event)
}

// Manager errors.
var (
	ErrNoPrevious = errors.New("bundle: no earlier bundle kept to roll back to")
	ErrNotKept    = errors.New("bundle: no kept bundle has that version or digest")
	// ErrOlder is returned when a bundle's sequence is below the last active bundle's and the
	// activation is not an explicit rollback.
	ErrOlder = errors.New("bundle: older than the active bundle (sequence)")
)

// DefaultKeep is how many bundles a Manager keeps for rollback when ManagerOptions.Keep is 0.
const DefaultKeep = 5

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	Active *chain.Active // required: the slot the gateway serves from
	Build  BuildOptions  // required: Build.Runtime at least
	// DataDir keeps accepted bundles under DataDir/bundles/<digest> and the history in
	// DataDir/bundles/history.json; required.
	DataDir string
	// Keys are the trusted public keys. A bundle must carry a signature by one of them unless
	// AllowUnsigned is set (then an unsigned bundle passes, a badly signed one still fails).
	Keys          KeySet
	AllowUnsigned bool
	Keep          int      // bundles kept for rollback, the active one included; 0 = 5
	Recorder      Recorder // bundle.activated / bundle.rejected events; nil = none
	Gateway       string   // instance id recorded in events
	Logger        *slog.Logger
	// Shadow is the slot a shadow bundle is installed in (host/engine.Shadow.Slot); nil = this
	// manager loads no shadow bundle (LoadShadow returns ErrNoShadowSlot). See shadow.go.
	Shadow *chain.Active
	// Ephemeral keeps nothing on disk: the manager of a one-process mode (proxy, hook, mcp,
	// policy test), which may run as many processes at once beside a gateway on the same data
	// dir. Each bundle is staged in a fresh private folder under StagingDir, checked and built
	// from it, and the folder is removed when the bundle's chain closes; DataDir is not used
	// (no history.json, no kept copies, so no Rollback, ActivateKept, Restore or shadow), and
	// the history lives in memory. Sequences carries the rollback protection across processes.
	Ephemeral bool
	// StagingDir is where an ephemeral manager stages bundles ("" = the system temp dir).
	StagingDir string
	// Sequences, if set, refuses a bundle whose sequence is below the last one accepted under
	// its name in the file (ErrOlder), judged on the bundle.yaml that was built, and remembers
	// each higher one: the rollback protection of processes that keep no history. An operator's
	// explicit rollback (Rollback, ActivateKept, RollbackArchive) is not checked against it.
	Sequences *Sequences
}

// Entry is one kept bundle, as listed by History and the admin API.
type Entry struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Sequence    uint64    `json:"sequence,omitempty"`
	Digest      string    `json:"digest"`           // hex sha256 (see Digest)
	KeyID       string    `json:"key_id,omitempty"` // signer; "" when unsigned
	Source      string    `json:"source,omitempty"` // where it came from (dir:..., http:..., nats:..., upload)
	ActivatedAt time.Time `json:"activated_at"`
}

// Info is the chain identity of the entry.
func (e Entry) Info() chain.Info {
	return chain.Info{Name: e.Name, Version: e.Version, Digest: e.Digest}
}

// Manager activates bundles: stage a private copy, verify its signature and hashes, build the
// chain (compile with the cache, fill pools, run the bundle's fixtures), swap it in atomically,
// then close the old chain once its in-flight requests drain. Any failure leaves the current
// bundle serving and records a bundle.rejected event. A bundle with the digest of the active one
// is a no-op. The last Keep bundles stay on disk for Rollback and ActivateKept.
//
// Lock order: actMu (held across a whole activation) before mu (guards history).
type Manager struct {
	o    ManagerOptions
	dir  string
	log  *slog.Logger
	wg   sync.WaitGroup // old chains draining
	actM sync.Mutex

	mu      sync.Mutex
	history []Entry // newest first; history[0] is active when active is true
	active  bool
	cur     *Bundle // the active bundle as built; nil when none
	shadow  *Entry  // the shadow bundle, nil when none
	// keptShadow is the shadow bundle shadow.json named at start (RestoreShadow); nil = none.
	keptShadow *Entry
}

// NewManager prepares DataDir/bundles and reads the kept history (Restore activates it).
func NewManager(o ManagerOptions) (*Manager, error) {
	if o.Active == nil || o.Build.Runtime == nil {
		return nil, errors.New("bundle: ManagerOptions.Active and Build.Runtime are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Build.Logger == nil {
		o.Build.Logger = o.Logger
	}
	if o.Ephemeral {
		if o.Shadow != nil {
			return nil, errors.New("bundle: an ephemeral manager keeps no shadow bundle (ManagerOptions.Shadow)")
		}
		o.Keep = 1
		return &Manager{o: o, dir: o.StagingDir, log: o.Logger}, nil
	}
	if o.DataDir == "" {
		return nil, errors.New("bundle: ManagerOptions.DataDir is required")
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	m := &Manager{o: o, dir: filepath.Join(o.DataDir, "bundles"), log: o.Logger}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, fmt.Errorf("bundle: data dir: %w", err)
	}
	// Staging folders left by a crash are garbage, and so is any shadow copy but the one
	// shadow.json names (RestoreShadow loads it again after a restart).
	if olds, _ := filepath.Glob(filepath.Join(m.dir, ".staging-*")); len(olds) > 0 {
		for _, p := range olds {
			_ = os.RemoveAll(p)
		}
	}
	m.keptShadow = m.readKeptShadow()
	if copies, _ := filepath.Glob(filepath.Join(m.dir, shadowDir, "*")); len(copies) > 0 {
		for _, p := range copies {
			if m.keptShadow == nil || filepath.Base(p) != m.keptShadow.Digest {
				_ = os.RemoveAll(p)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(m.dir, "history.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("bundle: history: %w", err)
	default:
		if err := json.Unmarshal(b, &m.history); err != nil {
			o.Logger.Warn("bundle history unreadable; starting empty", "err", err)
			m.history = nil
		}
	}
	return m, nil
}

// Current returns the active bundle's entry; ok is false when none is active.
func (m *Manager) Current() (e Entry, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.active || len(m.history) == 0 {
		return Entry{}, false
	}
	return m.history[0], true
}

// Bundle returns the active bundle as it was built (its manifest, chain and digest); nil when
// none is active.
func (m *Manager) Bundle() *Bundle {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.active {
		return nil
	}
	return m.cur
}

// History returns the kept bundles, newest first (the first is the active one, if any).
func (m *Manager) History() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Entry(nil), m.history...)
}

// Activate activates the bundle at path (a folder or a .tar.gz/.tgz archive). changed is false
// when the bundle is already active (same digest).
func (m *Manager) Activate(ctx context.Context, path, source string) (e Entry, changed bool, err error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	staged, err := Stage(path, m.dir)
	if err != nil {
		m.reject(ctx, source, nil, "", err)
		return Entry{}, false, err
	}
	return m.activateStaged(ctx, staged, source, false, false)
}

// ActivateArchive activates a bundle archive read from r (an upload, an HTTP body, an object).
// A bundle whose sequence is below the last active one's is refused with ErrOlder.
func (m *Manager) ActivateArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error) {
	return m.activateArchive(ctx, r, source, false)
}

// RollbackArchive is ActivateArchive for an operator's explicit rollback: an older sequence
// is accepted (and audited with rollback in the event's detail).
func (m *Manager) RollbackArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error) {
	return m.activateArchive(ctx, r, source, true)
}

func (m *Manager) activateArchive(ctx context.Context, r io.Reader, source string, older bool) (Entry, bool, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	staged, err := m.stage(func(dst string) error { return Unpack(r, dst) })
	if err != nil {
		m.reject(ctx, source, nil, "", err)
		return Entry{}, false, err
	}
	return m.activateStaged(ctx, staged, source, false, older)
}

// ActivateKept activates a kept bundle named by its version or a digest prefix (8+ hex digits).
func (m *Manager) ActivateKept(ctx context.Context, ref string) (Entry, bool, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	e, ok := m.find(ref)
	if !ok || m.o.Ephemeral {
		return Entry{}, false, fmt.Errorf("%w: %q", ErrNotKept, ref)
	}
	return m.activateEntry(ctx, e, "kept:"+ref, false) // an operator's choice: may be older
}

// Rollback activates the bundle that was active before the current one and forgets the current
// one (a stack: each Rollback goes one further back).
func (m *Manager) Rollback(ctx context.Context) (Entry, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	h := m.History()
	if len(h) < 2 || m.o.Ephemeral {
		return Entry{}, ErrNoPrevious
	}
	e, _, err := m.activateEntry(ctx, h[1], "rollback", true)
	return e, err
}

// Restore activates the newest kept bundle that still verifies and builds (at start, so a
// restarted gateway serves what it served before). It returns ErrNotKept when none does.
func (m *Manager) Restore(ctx context.Context) (Entry, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	if m.o.Ephemeral {
		return Entry{}, fmt.Errorf("%w: an ephemeral manager keeps no bundle", ErrNotKept)
	}
	var errs []error
	for _, e := range m.History() {
		got, _, err := m.activateEntry(ctx, e, "restore", false)
		if err == nil {
			return got, nil
		}
		errs = append(errs, err)
	}
	return Entry{}, fmt.Errorf("%w: %w", ErrNotKept, errors.Join(errs...))
}

// Close waits until the chains swapped out have drained and closed, or ctx ends. It does not
// close the active chain (the gateway does, after it stops taking requests).
func (m *Manager) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) find(ref string) (Entry, bool) {
	for _, e := range m.History() {
		if e.Version == ref || (len(ref) >= 8 && strings.HasPrefix(e.Digest, strings.TrimPrefix(ref, "sha256:"))) {
			return e, true
		}
	}
	return Entry{}, false
}

func (m *Manager) activateEntry(ctx context.Context, e Entry, source string, rollback bool) (Entry, bool, error) {
	staged, err := m.stage(func(dst string) error { return CopyDir(filepath.Join(m.dir, e.Digest), dst) })
	if err != nil {
		m.reject(ctx, source, nil, e.Digest, err)
		return Entry{}, false, err
	}
	if e.Source != "" {
		source += " (" + e.Source + ")"
	}
	return m.activateStaged(ctx, staged, source, rollback, true) // kept bundles: operator or restore
}

// stage fills a fresh private folder so that what is verified is exactly what is built.
func (m *Manager) stage(fill func(dst string) error) (string, error) {
	dst, err := os.MkdirTemp(m.dir, ".staging-")
	if err != nil {
		return "", fmt.Errorf("bundle: staging: %w", err)
	}
	if err := fill(dst); err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	return dst, nil
}

// activateStaged verifies, builds and swaps the staged bundle; it owns (and removes or keeps)
// the staged folder. actMu is held.
//
// older allows a sequence below the last active bundle's (operator rollbacks, kept bundles).
func (m *Manager) activateStaged(ctx context.Context, staged, source string, rollback, older bool) (_ Entry, _ bool, err error) {
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(staged)
		}
	}()
	man, _ := LoadManifest(staged) // for the rejection event; Build reports a bad manifest
	keyID, digest, verr := CheckTrust(staged, m.o.Keys, m.o.AllowUnsigned)
	if verr != nil {
		m.reject(ctx, source, man, digest, verr)
		return Entry{}, false, verr
	}
	if keyID == "" && !m.o.Ephemeral {
		m.log.Warn("activating an unsigned bundle (allow_unsigned is set)", "source", source, "digest", digest)
	} else if keyID == "" {
		m.log.Debug("unsigned bundle allowed", "source", source, "digest", digest)
	}
	if cur, ok := m.Current(); ok && cur.Digest == digest && !rollback {
		m.log.Info("bundle unchanged", "bundle", cur.Name, "version", cur.Version, "digest", digest, "source", source)
		return cur, false, nil
	}
	if last, ok := m.last(); ok && !older && man != nil && man.Sequence < last.Sequence {
		err := fmt.Errorf("%w: %s sequence %d is below %s %s sequence %d (roll back explicitly: palisade bundle push --rollback, bundle rollback or bundle activate)",
			ErrOlder, man.Version, man.Sequence, last.Name, last.Version, last.Sequence)
		m.reject(ctx, source, man, digest, err)
		return Entry{}, false, err
	}
	start := time.Now()
	bo := m.o.Build
	if m.o.Ephemeral {
		bo.onClose = func() { os.RemoveAll(staged) } // built from the private copy: gone with its chain
	}
	b, err := Build(ctx, staged, bo)
	if err != nil {
		m.reject(ctx, source, man, digest, err)
		return Entry{}, false, err
	}
	if b.Digest != digest { // the private copy changed between the check and the build
		b.Chain.CloseWhenDrained(context.WithoutCancel(ctx))
		err := fmt.Errorf("%w: the staged copy changed while it was built (checked sha256:%s, built sha256:%s)", ErrDigestMismatch, digest, b.Digest)
		m.reject(ctx, source, man, digest, err)
		return Entry{}, false, err
	}
	if m.o.Sequences != nil && !older {
		// b.Manifest is the bundle.yaml Build read, pinned to the checked digest: the sequence
		// judged is the signed one.
		if err := m.o.Sequences.Accept(b.Manifest, digest); err != nil {
			b.Chain.CloseWhenDrained(context.WithoutCancel(ctx))
			m.reject(ctx, source, b.Manifest, digest, err)
			return Entry{}, false, err
		}
	}
	final := filepath.Join(m.dir, digest)
	if m.o.Ephemeral {
		keep = true // removed by the chain's close (onClose)
		b.Dir = staged
	} else if _, serr := os.Stat(final); serr == nil {
		// Same content kept earlier: keep the old copy, drop the staged one.
		b.Dir = final
	} else if rerr := os.Rename(staged, final); rerr == nil {
		keep = true
		b.Dir = final
	} else {
		b.Chain.CloseWhenDrained(context.Background())
		err = fmt.Errorf("bundle: keep %s: %w", digest, rerr)
		m.reject(ctx, source, man, digest, err)
		return Entry{}, false, err
	}
	e := Entry{Name: b.Manifest.Name, Version: b.Manifest.Version, Sequence: b.Manifest.Sequence, Digest: digest, KeyID: keyID, Source: source, ActivatedAt: time.Now().UTC()}

	if prev := m.o.Active.Swap(b.Chain); prev != nil {
		m.drain(prev)
	}
	prevEntry, hadPrev := m.Current()
	m.mu.Lock()
	h := m.history
	if rollback && len(h) > 0 {
		h = h[1:] // forget the bundle rolled back from
	}
	nh := []Entry{e}
	for _, x := range h {
		if x.Digest != digest {
			nh = append(nh, x)
		}
	}
	var dropped []Entry
	if len(nh) > m.o.Keep {
		dropped = nh[m.o.Keep:]
		nh = nh[:m.o.Keep]
	}
	m.history = nh
	m.active = true
	m.cur = b
	m.mu.Unlock()
	if !m.o.Ephemeral {
		for _, x := range dropped {
			_ = os.RemoveAll(filepath.Join(m.dir, x.Digest))
		}
		if rollback && hadPrev && prevEntry.Digest != digest {
			_ = os.RemoveAll(filepath.Join(m.dir, prevEntry.Digest))
		}
		if err := m.saveHistory(); err != nil {
			m.log.Warn("bundle history not saved", "err", err)
		}
	}
	detail := map[string]any{"source": source, "build_ms": time.Since(start).Milliseconds()}
	if keyID != "" {
		detail["key_id"] = keyID
	} else {
		detail["unsigned"] = true
	}
	if hadPrev {
		detail["previous"] = prevEntry.Info()
	}
	if rollback || older && hadPrev && e.Sequence < prevEntry.Sequence {
		detail["rollback"] = true
	}
	m.record(ctx, audit.KindBundleActivated, e.Info(), "", detail)
	level := slog.LevelInfo
	if m.o.Ephemeral && !hadPrev {
		level = slog.LevelDebug // the bundle a one-process mode starts with (a hook starts per call)
	}
	m.log.Log(ctx, level, "bundle activated", "bundle", e.Name, "version", e.Version, "digest", digest, "key_id", keyID, "source", source, "build_ms", time.Since(start).Milliseconds())
	return e, true, nil
}

// last is the last activated bundle (the active one, or after a restart the one that was):
// the sequence new bundles must not go below.
func (m *Manager) last() (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.history) == 0 {
		return Entry{}, false
	}
	return m.history[0], true
}

func (m *Manager) saveHistory() error {
	b, err := json.MarshalIndent(m.History(), "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(m.dir, "history.json"), b, 0o600)
}

// CheckTrust applies the trust policy every mode shares (the gateway's Manager, and the
// one-process modes through host/gateway.Core): dir must carry a valid signature by one of keys
// over exactly its files, or, when allowUnsigned is set, no signature at all (a bad signature
// never passes while keys are trusted). It returns the signer's key id ("" when not checked)
// and the digest. Errors wrap ErrUnsigned, ErrUntrustedKey, ErrBadSignature or
// ErrDigestMismatch.
//
// # Notes
//
// With allowUnsigned and no trusted keys (the development default of a local bundle without a
// bundles: config section) signatures are not checked at all: there is no key to check them
// against, and removing signature.json would pass anyway.
func CheckTrust(dir string, keys KeySet, allowUnsigned bool) (keyID, digest string, err error) {
	if allowUnsigned && len(keys) == 0 {
		digest, err := Digest(dir)
		return "", digest, err
	}
	sig, digest, err := Verify(dir, keys)
	switch {
	case err == nil:
		return sig.KeyID, digest, nil
	case errors.Is(err, ErrUnsigned) && allowUnsigned:
		return "", digest, nil
	case errors.Is(err, ErrUnsigned):
		return "", digest, fmt.Errorf("%w: no %s (sign it with `palisade bundle sign`, or allow unsigned bundles in config)", ErrUnsigned, SignatureFile)
	}
	return "", digest, err
}

// RejectReason names the step a bundle failed at, for events, the admin API and the CLI.
func RejectReason(err error) string {
	var fe *FieldError
	switch {
	case errors.Is(err, ErrUnsigned):
		return "unsigned"
	case errors.Is(err, ErrUntrustedKey):
		return "untrusted_key"
	case errors.Is(err, ErrBadSignature):
		return "bad_signature"
	case errors.Is(err, ErrDigestMismatch):
		return "tampered"
	case errors.Is(err, ErrHashMismatch):
		return "hash_mismatch"
	case errors.Is(err, ErrOlder):
		return "older_sequence"
	case errors.Is(err, ErrFixture):
		return "fixture_failed"
	case errors.Is(err, ErrBadArchive), errors.Is(err, ErrIrregularFile):
		return "bad_archive"
	case errors.As(err, &fe) && (strings.HasPrefix(fe.Path, "stages[") && !strings.Contains(fe.Path, ".")):
		return "plugin_load_failed"
	case errors.As(err, &fe):
		return "invalid_manifest"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

// drain closes a chain swapped out once its in-flight requests are done (Close waits for it).
func (m *Manager) drain(prev *chain.Chain) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = prev.CloseWhenDrained(context.Background())
	}()
}

func (m *Manager) reject(ctx context.Context, source string, man *Manifest, digest string, err error) {
	m.rejectSlot(ctx, "", source, man, digest, err)
}

// rejectSlot records bundle.rejected; slot is "shadow" for a shadow bundle ("" = active).
func (m *Manager) rejectSlot(ctx context.Context, slot, source string, man *Manifest, digest string, err error) {
	info := chain.Info{Digest: digest}
	if man != nil {
		info.Name, info.Version = man.Name, man.Version
	}
	m.log.Warn("bundle rejected", "bundle", info.Name, "version", info.Version, "digest", digest, "source", source, "slot", slot, "reason", RejectReason(err), "err", err)
	detail := map[string]any{"source": source, "reason": RejectReason(err)}
	if slot != "" {
		detail["slot"] = slot
	}
	m.record(ctx, audit.KindBundleRejected, info, err.Error(), detail)
}

func (m *Manager) record(ctx context.Context, kind string, info chain.Info, reason string, detail map[string]any) {
	if m.o.Recorder == nil {
		return
	}
	ev := audit.Event{ID: audit.NewID(), Time: time.Now().UTC(), Kind: kind, Gateway: m.o.Gateway, Reason: reason}
	if info.Name != "" || info.Digest != "" {
		ev.Bundle = &audit.Bundle{Name: info.Name, Version: info.Version, Digest: info.Digest}
	}
	if cur, ok := m.Current(); ok && kind == audit.KindBundleRejected {
		detail["active"] = cur.Info()
	}
	ev.Detail, _ = json.Marshal(detail)
	m.o.Recorder.Record(context.WithoutCancel(ctx), ev)
}

// CopyDir copies the regular files of the folder src into dst, refusing links and devices
// (ErrIrregularFile).
func CopyDir(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("bundle: %s is neither a folder nor a .tar.gz archive", src)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("bundle: %s: %w", filepath.ToSlash(rel), ErrIrregularFile)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}
