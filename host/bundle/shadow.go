package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/added060/palisade/host/internal/atomicfile"

	"github.com/added060/palisade/host/audit"
)

// Shadow errors.
var (
	// ErrNoShadow is returned by PromoteShadow and ClearShadow when no shadow bundle is loaded.
	ErrNoShadow = errors.New("bundle: no shadow bundle loaded")
	// ErrNoShadowSlot is returned when the Manager was built without ManagerOptions.Shadow.
	ErrNoShadowSlot = errors.New("bundle: this gateway has no shadow slot")
)

// ShadowStagePrefix starts the stage name a shadow chain's stage calls report to
// BuildOptions.OnStage (palisade_stage_duration_seconds{stage="shadow:rules"}), so they never
// mix with the active chain's.
const ShadowStagePrefix = "shadow:"

// shadowDir is where the shadow bundle's accepted copy is kept: DataDir/bundles/shadow/<digest>.
const shadowDir = "shadow"

// LoadShadow loads the bundle at path (a folder or a .tar.gz/.tgz archive) into the shadow slot:
// the same staged copy, trust check and build (fixtures included) as Activate, but the chain
// goes into ManagerOptions.Shadow, where it judges copies of the calls the active bundle decides
// and decides nothing. Its sequence is not checked (any bundle may be tried in the shadow);
// PromoteShadow checks it. changed is false when that bundle is already the shadow. A failure
// keeps the current shadow (or none) and records bundle.rejected with detail.slot "shadow".
func (m *Manager) LoadShadow(ctx context.Context, path, source string) (Entry, bool, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	staged, err := Stage(path, m.dir)
	if err != nil {
		m.rejectSlot(ctx, "shadow", source, nil, "", err)
		return Entry{}, false, err
	}
	return m.shadowStaged(ctx, staged, source)
}

// LoadShadowArchive is LoadShadow for an archive read from r (an upload, an object).
func (m *Manager) LoadShadowArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	staged, err := m.stage(func(dst string) error { return Unpack(r, dst) })
	if err != nil {
		m.rejectSlot(ctx, "shadow", source, nil, "", err)
		return Entry{}, false, err
	}
	return m.shadowStaged(ctx, staged, source)
}

// Shadow returns the shadow bundle's entry; ok is false when none is loaded.
func (m *Manager) Shadow() (e Entry, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shadow == nil {
		return Entry{}, false
	}
	return *m.shadow, true
}

// ClearShadow empties the shadow slot (its chain closes once its judgements drain) and records
// bundle.shadow with detail.cleared. It returns the bundle it cleared, or ErrNoShadow.
func (m *Manager) ClearShadow(ctx context.Context) (Entry, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	e, ok := m.Shadow()
	if !ok {
		return Entry{}, ErrNoShadow
	}
	m.clearShadow(ctx, map[string]any{"cleared": true})
	m.log.Info("shadow bundle cleared", "bundle", e.Name, "version", e.Version, "digest", e.Digest)
	return e, nil
}

// PromoteShadow makes the shadow bundle the active one through the signed activation path of
// any swap: a fresh staged copy of the kept shadow, the trust check again, the sequence check
// (a shadow older than the active bundle is refused with ErrOlder: promote is no rollback),
// build, swap, history and a bundle.activated event whose detail.source starts with
// "promote-shadow". The shadow slot is then emptied. A failure leaves both slots as they were.
func (m *Manager) PromoteShadow(ctx context.Context) (Entry, bool, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	sh, ok := m.Shadow()
	if !ok {
		return Entry{}, false, ErrNoShadow
	}
	staged, err := m.stage(func(dst string) error { return CopyDir(filepath.Join(m.dir, shadowDir, sh.Digest), dst) })
	if err != nil {
		m.reject(ctx, "promote-shadow", nil, sh.Digest, err)
		return Entry{}, false, err
	}
	e, changed, err := m.activateStaged(ctx, staged, "promote-shadow ("+sh.Source+")", false, false)
	if err != nil {
		return Entry{}, false, err
	}
	m.clearShadow(ctx, map[string]any{"cleared": true, "promoted": true})
	return e, changed, nil
}

// ShadowTarget returns the Target that hands a Source's bundles to the shadow slot (the
// `bundles: {shadow: <source>}` config): Activate and ActivateArchive load the shadow.
func (m *Manager) ShadowTarget() Target { return shadowTarget{m} }

type shadowTarget struct{ m *Manager }

func (t shadowTarget) Activate(ctx context.Context, path, source string) (Entry, bool, error) {
	return t.m.LoadShadow(ctx, path, source)
}

func (t shadowTarget) ActivateArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error) {
	return t.m.LoadShadowArchive(ctx, r, source)
}

func (t shadowTarget) RollbackArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error) {
	return t.m.LoadShadowArchive(ctx, r, source) // the shadow has no sequence check to lift
}

func (t shadowTarget) Current() (Entry, bool) { return t.m.Shadow() }

// shadowStaged verifies and builds the staged bundle and installs it in the shadow slot; it owns
// (removes or keeps) the staged folder. actM is held.
func (m *Manager) shadowStaged(ctx context.Context, staged, source string) (_ Entry, _ bool, err error) {
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(staged)
		}
	}()
	if m.o.Shadow == nil {
		return Entry{}, false, ErrNoShadowSlot
	}
	man, _ := LoadManifest(staged)
	keyID, digest, verr := CheckTrust(staged, m.o.Keys, m.o.AllowUnsigned)
	if verr != nil {
		m.rejectSlot(ctx, "shadow", source, man, digest, verr)
		return Entry{}, false, verr
	}
	if cur, ok := m.Shadow(); ok && cur.Digest == digest {
		return cur, false, nil
	}
	start := time.Now()
	bo := m.o.Build
	if on := bo.OnStage; on != nil {
		// The shadow's stage calls are not the active chain's: their metrics say so.
		bo.OnStage = func(stage, phase, action string, d time.Duration, err error) {
			on(ShadowStagePrefix+stage, phase, action, d, err)
		}
	}
	b, err := Build(ctx, staged, bo)
	if err != nil {
		m.rejectSlot(ctx, "shadow", source, man, digest, err)
		return Entry{}, false, err
	}
	final := filepath.Join(m.dir, shadowDir, digest)
	_ = os.RemoveAll(final)
	err = os.MkdirAll(filepath.Dir(final), 0o755)
	if err == nil {
		err = os.Rename(staged, final)
	}
	if err != nil {
		b.Chain.CloseWhenDrained(context.Background())
		err = fmt.Errorf("bundle: keep shadow %s: %w", digest, err)
		m.rejectSlot(ctx, "shadow", source, man, digest, err)
		return Entry{}, false, err
	}
	keep = true
	e := Entry{Name: b.Manifest.Name, Version: b.Manifest.Version, Sequence: b.Manifest.Sequence, Digest: digest, KeyID: keyID, Source: source, ActivatedAt: time.Now().UTC()}
	prevEntry, hadPrev := m.Shadow()
	m.swapShadow(&e)
	if prev := m.o.Shadow.Swap(b.Chain); prev != nil {
		m.drain(prev)
	}
	if hadPrev && prevEntry.Digest != digest {
		_ = os.RemoveAll(filepath.Join(m.dir, shadowDir, prevEntry.Digest))
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
	if cur, ok := m.Current(); ok {
		detail["active"] = cur.Info()
	}
	m.record(ctx, audit.KindBundleShadow, e.Info(), "", detail)
	m.log.Info("shadow bundle loaded", "bundle", e.Name, "version", e.Version, "digest", digest, "key_id", keyID, "source", source)
	return e, true, nil
}

// clearShadow empties the shadow slot and records bundle.shadow with detail. actM is held.
func (m *Manager) clearShadow(ctx context.Context, detail map[string]any) {
	e, ok := m.Shadow()
	if !ok {
		return
	}
	m.swapShadow(nil)
	if prev := m.o.Shadow.Swap(nil); prev != nil {
		m.drain(prev)
	}
	_ = os.RemoveAll(filepath.Join(m.dir, shadowDir, e.Digest))
	m.record(ctx, audit.KindBundleShadow, e.Info(), "", detail)
}

// swapShadow sets the shadow entry and keeps it in DataDir/bundles/shadow.json (removed when
// e is nil), so a restarted gateway judges with the same shadow (RestoreShadow).
func (m *Manager) swapShadow(e *Entry) {
	m.mu.Lock()
	m.shadow = e
	m.mu.Unlock()
	p := filepath.Join(m.dir, shadowFile)
	if e == nil {
		_ = os.Remove(p)
		return
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err == nil {
		err = atomicfile.Write(p, b, 0o600)
	}
	if err != nil {
		m.log.Warn("shadow bundle not kept for a restart", "err", err)
	}
}

// shadowFile names the shadow bundle a restart loads again (its copy is shadowDir/<digest>).
const shadowFile = "shadow.json"

// readKeptShadow reads shadow.json; nil when there is none, it is unreadable or its copy is
// gone.
func (m *Manager) readKeptShadow() *Entry {
	b, err := os.ReadFile(filepath.Join(m.dir, shadowFile))
	if err != nil {
		return nil
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil || e.Digest == "" || filepath.Base(e.Digest) != e.Digest {
		m.log.Warn("shadow.json unreadable; no shadow bundle restored", "err", err)
		return nil
	}
	if _, err := os.Stat(filepath.Join(m.dir, shadowDir, e.Digest)); err != nil {
		return nil
	}
	return &e
}

// RestoreShadow loads the shadow bundle that was loaded before a restart (however it came: the
// admin API, `palisade tune --shadow`, a source), through the same staged copy, trust check and
// build as LoadShadow, so a key no longer trusted refuses it. It returns ErrNoShadow when there
// was none. The gateway calls it at start when the config names no shadow source.
func (m *Manager) RestoreShadow(ctx context.Context) (Entry, error) {
	m.actM.Lock()
	defer m.actM.Unlock()
	if m.o.Shadow == nil {
		return Entry{}, ErrNoShadowSlot
	}
	k := m.keptShadow
	if k == nil {
		return Entry{}, ErrNoShadow
	}
	staged, err := m.stage(func(dst string) error { return CopyDir(filepath.Join(m.dir, shadowDir, k.Digest), dst) })
	if err != nil {
		m.rejectSlot(ctx, "shadow", "restore", nil, k.Digest, err)
		return Entry{}, err
	}
	source := "restore"
	switch {
	case strings.HasPrefix(k.Source, "restore"):
		source = k.Source // restored before: the origin is already named once
	case k.Source != "":
		source += " (" + k.Source + ")"
	}
	e, _, err := m.shadowStaged(ctx, staged, source)
	return e, err
}
