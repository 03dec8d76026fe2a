package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
	"gopkg.in/yaml.v3"
)

// BuildOptions are what Build needs besides the bundle folder.
type BuildOptions struct {
	Runtime *plugin.Runtime // required
	Deps    hostfn.Deps     // backends of the host functions
	Logger  *slog.Logger    // nil = discard
	// OnStage is passed to the chain (metrics).
	OnStage func(stage, phase, action string, d time.Duration, err error)
	// Unavailable, if set, is asked per stage whether it can run here besides the built-in
	// check (a stage granted infer whose model or runtime is missing): a non-nil error refuses
	// the bundle (ErrStageCannotRun) unless ServeDegraded.
	Unavailable func(s StageSpec) error
	// ServeDegraded builds a bundle whose stages cannot all run: each such stage fails by its
	// failure mode on every call, the chain's Info.Degraded names them (readiness and every
	// audit event say so). false refuses the bundle.
	ServeDegraded bool
	// SkipFixtures skips the bundle's fixtures (policy test runs them itself).
	SkipFixtures bool
	// Fixtures, if set, remembers bundles whose fixtures passed on this host: they are not
	// run again for the same digest (the one-process modes start often).
	Fixtures *FixtureMemo
	// MaxPool caps every stage's instance pool (0 = as the bundle says): a process that decides
	// one call (the Claude Code hook) starts one instance per stage, not a pool.
	MaxPool int
	// onClose runs once after the built chain has closed (Load removes its staged copy).
	onClose func()
	// Models, if set, builds the inference backend for the bundle's models: section (host/infer
	// through the gateway). Its Inferer serves this bundle's stages only, and the closer runs
	// when the bundle's chain closes. Without it, or without models, Deps.Inferer is used.
	Models func(ctx context.Context, dir string, models []yaml.Node) (hostfn.Inferer, io.Closer, error)
}

// Bundle is a loaded bundle: its manifest, its digest and the chain built from it.
type Bundle struct {
	Dir      string
	Manifest *Manifest
	Digest   string // sha256 over the canonical listing of every file
	Chain    *chain.Chain
}

// Info returns the identity recorded in audit events.
func (b *Bundle) Info() chain.Info {
	return b.Chain.Info()
}

// Build verifies the bundle in dir, compiles its plugins, fills their pools and runs its
// fixtures. On error everything it started is closed.
//
// The digest is taken first, and every file Build reads afterwards (bundle.yaml, plugins, data,
// fixtures) must hash to what the digest listed, or Build fails with ErrDigestMismatch: the
// chain is built from exactly the bytes Bundle.Digest names, even if the folder changes while
// it builds. Model files are read by BuildOptions.Models itself (pin them with sha256:). To
// check a signature and build from the same bytes, use Load.
func Build(ctx context.Context, dir string, o BuildOptions) (_ *Bundle, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	digest, sums, err := digestFiles(dir)
	if err != nil {
		return nil, err
	}
	read := pinnedReader(dir, sums)
	raw, err := read(ManifestFile)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, err
	}
	var stages []*chain.Stage
	var idleAfter []*plugin.Plugin // only_on_sample stages: closed to no instance once the bundle is checked
	var degraded []string          // stages that cannot run, when serving degraded
	var renew []*plugin.Plugin     // stages whose instances the fixtures ran on, renewed after
	var modelCloser io.Closer
	if o.Models != nil && len(m.Models) > 0 {
		inf, cl, merr := o.Models(ctx, dir, m.Models)
		if merr != nil {
			return nil, &FieldError{Path: "models", Err: merr}
		}
		o.Deps.Inferer, modelCloser = inf, cl
	}
	defer func() {
		if err != nil && modelCloser != nil {
			modelCloser.Close()
		}
		if err != nil {
			for _, s := range stages {
				if c, ok := s.Plugin.(chain.Closer); ok {
					c.Close(context.Background())
				}
			}
		}
	}()
	for i, s := range m.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		wasm, err := read(s.Plugin)
		if err != nil {
			return nil, &FieldError{Path: p + ".plugin", Err: err}
		}
		sum := sha256.Sum256(wasm)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, s.SHA256) {
			return nil, &FieldError{Path: p + ".sha256", Err: fmt.Errorf("%w: %s is %s, bundle.yaml pins %s", ErrHashMismatch, s.Plugin, got, s.SHA256)}
		}
		cfg, err := stageConfig(read, s)
		if err != nil {
			return nil, &FieldError{Path: p, Err: err}
		}
		st := &chain.Stage{
			Name:           s.Name,
			Match:          chain.Match{Methods: s.Match.Methods, Tools: s.Match.Tools, Servers: s.Match.Servers},
			Request:        s.Phase == "" || s.Phase == "request" || s.Phase == "both",
			Response:       s.Phase == "response" || s.Phase == "both",
			FailClosed:     s.Failure != "open",
			NeedsPrior:     s.NeedsPrior || s.ResolvesSample,
			ResolvesSample: s.ResolvesSample,
			OnlyOnSample:   s.OnlyOnSample,
			Timeout:        time.Duration(s.Timeout),
			Observe:        s.Mode == "observe",
		}
		uerr := error(nil)
		if o.Unavailable != nil {
			uerr = o.Unavailable(s)
		}
		if uerr == nil && slices.Contains(s.Capabilities, hostfn.CapInfer) {
			uerr = inferUnavailable(o.Deps.Inferer, s)
		}
		if uerr != nil {
			if !o.ServeDegraded {
				return nil, &FieldError{Path: p, Err: fmt.Errorf("%w: stage %s cannot run here: %w (bundles.serve_degraded: true serves without it, not ready and every decision marked degraded)", ErrStageCannotRun, s.Name, uerr)}
			}
			o.Logger.Warn("stage unavailable; serving degraded", "stage", s.Name, "err", uerr)
			st.Plugin = unavailable{err: uerr}
			stages = append(stages, st)
			degraded = append(degraded, s.Name+": "+uerr.Error())
			continue
		}
		pl, err := o.Runtime.Load(ctx, plugin.Spec{
			Name:            s.Name,
			Wasm:            wasm,
			Config:          cfg,
			Timeout:         time.Duration(s.Timeout),
			MaxPages:        s.MemoryPages,
			PoolSize:        poolSize(s, o.MaxPool),
			Warm:            warm(s),
			Uninterruptible: s.Trusted,
			HostFunctions:   hostfn.Build(s.Name, s.Capabilities, o.Deps),
			Logger:          o.Logger,
		})
		if err != nil {
			return nil, &FieldError{Path: p, Err: err}
		}
		st.Plugin = pl
		stages = append(stages, st)
		o.Logger.Debug("stage loaded", "stage", s.Name, "convention", pl.Convention())
		if s.OnlyOnSample {
			idleAfter = append(idleAfter, pl)
		} else {
			renew = append(renew, pl)
		}
		d, err := checkDescribe(ctx, pl)
		if err != nil {
			return nil, &FieldError{Path: p, Err: fmt.Errorf("stage %s: %w", s.Name, err)}
		}
		st.View = d.Input == abi.InputView
		st.ViewPrior = st.View && d.View >= abi.ViewLayout2
	}
	ch, err := chain.New(chain.Options{
		Info:           chain.Info{Name: m.Name, Version: m.Version, Digest: digest, Degraded: degraded},
		Stages:         stages,
		DefaultAction:  m.DefaultAction,
		AskFallback:    m.Fallback.Ask,
		SampleFallback: m.Fallback.Sample,
		Observe:        m.Mode == "observe",
		ShowDenied:     m.ToolsList.HideDenied != nil && !*m.ToolsList.HideDenied,
		Uncertain:      m.Uncertain,
		Uncovered: chain.Coverage{Action: m.Coverage.Uncovered, Stages: m.Coverage.JudgeWith,
			Pass:   chain.Methods{Request: m.Coverage.Pass.Request, Response: m.Coverage.Pass.Response},
			Refuse: chain.Methods{Request: m.Coverage.Refuse.Request, Response: m.Coverage.Refuse.Response}},
		Logger:  o.Logger,
		OnStage: o.OnStage,
		OnClose: o.onClose,
	})
	if err != nil {
		return nil, err
	}
	b := &Bundle{Dir: dir, Manifest: m, Digest: digest, Chain: ch}
	ch.SetExtra(b)
	if !o.SkipFixtures && m.Fixtures != "" {
		if o.Fixtures.Passed(digest) {
			o.Logger.Debug("fixtures passed before on this host; not run again", "bundle", m.Name, "digest", digest)
		} else {
			if err := b.runFixtures(ctx, m.Fixtures, read, slices.Sorted(maps.Keys(sums))); err != nil {
				ch.CloseWhenDrained(context.Background())
				stages = nil
				return nil, err
			}
			o.Fixtures.Record(digest)
			// The fixtures grew the instances that ran them (a guest's linear memory never
			// shrinks: the example injection stage served at 12.5 MiB instead of 10.2-11, and
			// wazero keeps the call stack a deep fixture grew); serving starts from fresh ones.
			// The stages start theirs side by side (35-90 ms an instance of the example's
			// module on two busy cores).
			var wg sync.WaitGroup
			for _, pl := range renew {
				wg.Go(func() {
					if _, err := pl.Renew(ctx); err != nil {
						o.Logger.Warn("stage instance not renewed after the fixtures; the next call starts one", "stage", pl.Name(), "err", err)
					}
				})
			}
			wg.Wait()
		}
	}
	// A stage that runs only on sampled calls keeps no instance between them once the bundle is
	// checked: its started, described and tested instance held its linear memory (8.5 MiB for
	// the example judge) for calls that seldom come, and the one that comes waits on a model.
	for _, pl := range idleAfter {
		pl.Trim()
	}
	return b, nil
}

// checkDescribe calls describe when the plugin exports it and rejects an incompatible ABI or an
// input this host cannot give (a view layout it does not speak). A plugin without describe is
// described as the zero Describe: ABI 1.0, the JSON envelope.
func checkDescribe(ctx context.Context, pl *plugin.Plugin) (abi.Describe, error) {
	var d abi.Describe
	ok, err := pl.Exports(ctx, "describe")
	if err != nil || !ok {
		return d, err
	}
	out, err := pl.Call(ctx, "describe", nil)
	if err != nil {
		return d, fmt.Errorf("describe: %w", err)
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return d, fmt.Errorf("describe: not JSON: %w", err)
	}
	if d.ABI != "" { // no version stated: taken as 1.0 (sdk/ABI.md "Versions")
		if err := abi.Compatible(d.ABI); err != nil {
			return d, err
		}
	}
	return d, abi.CheckInput(d)
}

func poolSize(s StageSpec, max int) int {
	n := s.Pool
	if n <= 0 {
		n = DefaultPool(s)
	}
	if max > 0 && n > max {
		return max
	}
	return n
}

// DefaultPool is a stage's instance pool when bundle.yaml gives none. A stage that computes
// gets half the cores the process may use (at least one): the chain runs its stages side by
// side, so on two cores two instances of each of five stages only took turns, and each held
// ~10 MB of linear memory (the example chain at c=16 on two cores: pools of one, RSS 274 MB
// against 310-315 with pools of two, at the same throughput and CPU per request within the
// noise). A stage granted sample holds its instance while a model answers, not a core: it
// keeps two, or one per core where there are more.
func DefaultPool(s StageSpec) int {
	if slices.Contains(s.Capabilities, "sample") {
		return max(2, runtime.GOMAXPROCS(0))
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// warm is how many of a stage's instances start with the bundle: one for a stage that runs
// only on sampled calls (it proves the module starts and answers describe and the fixtures;
// Build then closes it, and sampled calls start what they need), else all of them.
func warm(s StageSpec) int {
	if s.OnlyOnSample {
		return 1
	}
	return 0
}

// ErrStageCannotRun refuses a bundle naming a stage that cannot run here (its model or
// inference runtime is missing) when the operator does not serve degraded.
var ErrStageCannotRun = errors.New("bundle: stage cannot run")

// modelChecker is an inference backend that can say whether a model answers (infer.Registry).
type modelChecker interface {
	Unavailable(model string) error
}

// inferUnavailable says why stage s, granted infer, cannot run on inf (nil when it can): no
// backend, or the model its config names (every model when it names none) unavailable.
func inferUnavailable(inf hostfn.Inferer, s StageSpec) error {
	if inf == nil {
		return errors.New("no inference backend: the bundle declares no models, or the host has no inference runtime")
	}
	mc, ok := inf.(modelChecker)
	if !ok {
		return nil
	}
	model, _ := s.Config["model"].(string)
	return mc.Unavailable(model)
}

type unavailable struct{ err error }

func (u unavailable) Evaluate(context.Context, []byte) ([]byte, error) {
	return nil, fmt.Errorf("%w: %w", chain.ErrUnavailable, u.err)
}

// stageConfig builds the config a plugin reads with config_get: "config" = the stage config as
// JSON, and one key per data file (YAML converted to JSON).
func stageConfig(read func(rel string) ([]byte, error), s StageSpec) (map[string]string, error) {
	cfg := map[string]string{}
	c := s.Config
	if c == nil {
		c = map[string]any{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg["config"] = string(b)
	for k, f := range s.Data {
		raw, err := read(f)
		if err != nil {
			return nil, fmt.Errorf("data.%s: %w", k, err)
		}
		if ext := strings.ToLower(filepath.Ext(f)); ext == ".yaml" || ext == ".yml" {
			var v any
			if err := yaml.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("data.%s: %s: %w", k, f, err)
			}
			raw, err = json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("data.%s: %s: %w", k, f, err)
			}
		}
		cfg[k] = string(raw)
	}
	return cfg, nil
}

// Digest returns the bundle's canonical digest (hex): the sha256 over the sorted lines
// "path\x00sha256(file)\n", one per regular file in dir, paths relative with forward slashes.
// Only the root signature.json is left out (it carries the signature over this digest).
// Symlinks and other irregular files are an error: everything the bundle reads must be covered.
func Digest(dir string) (string, error) {
	d, _, err := digestFiles(dir)
	return d, err
}

// digestFiles is Digest, also returning each file's sha256 (hex) by its relative path.
func digestFiles(dir string) (string, map[string]string, error) {
	var lines []string
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w", rel, ErrIrregularFile)
		}
		if IsSignatureFile(rel) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		sums[rel] = hex.EncodeToString(sum[:])
		lines = append(lines, rel+"\x00"+sums[rel]+"\n")
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("bundle digest: %w", err)
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil)), sums, nil
}

// pinnedReader reads files of the bundle in dir, each checked against the sha256 the digest
// listed for it (sums): a file changed, added or removed since the digest was taken is
// ErrDigestMismatch, so what is built is what the digest (and a signature over it) covers.
func pinnedReader(dir string, sums map[string]string) func(rel string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
		want, ok := sums[rel]
		if !ok {
			return nil, fmt.Errorf("%w: %s is not a file of the bundle when its digest was taken", ErrDigestMismatch, rel)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
			return nil, fmt.Errorf("%w: %s changed while the bundle was built", ErrDigestMismatch, rel)
		}
		return b, nil
	}
}

// ErrIrregularFile is returned for a symlink, device or other non-regular file in a bundle.
var ErrIrregularFile = errors.New("bundle: not a regular file (symlinks are refused)")

// IsSignatureFile reports whether a bundle-relative path is the signature (excluded from the
// digest): only signature.json at the bundle's root.
func IsSignatureFile(rel string) bool { return rel == SignatureFile }
