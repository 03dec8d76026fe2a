package infer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/added060/palisade/sdk/go/abi"
)

// Options configures a Registry.
type Options struct {
	// Models are the bundle's model declarations.
	Models []ModelSpec
	// BaseDir resolves relative ModelSpec.File paths; "" = the working directory.
	BaseDir string
	// LibraryPath is the ONNX Runtime shared library; "" = FindLibrary's search
	// ($PALISADE_ONNXRUNTIME_LIB, $PALISADE_BUILD/ort, /usr/local/lib).
	LibraryPath string
	// MaxTexts bounds the texts in one Infer call; 0 = 256.
	MaxTexts int
	// HTTPClient is used for kserve models; nil = http.DefaultClient (each
	// call is bounded by the model's kserve.timeout).
	HTTPClient *http.Client
	// Logger receives lifecycle and fallback logs; nil = discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxTexts == 0 {
		o.MaxTexts = 256
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Registry holds the bundle's models and runs them. It is safe for concurrent
// use. Its Infer method satisfies the `infer` host function's Inferer.
type Registry struct {
	opts    Options
	models  map[string]*model
	order   []string
	library string
	tried   []LibraryCandidate
	libErr  error
	libDone bool // findLibrary ran (New's goroutine only)
	closed  atomic.Bool
}

type model struct {
	spec   ModelSpec
	pre    Preprocessor
	local  backend // nil when unavailable
	remote backend // kserve, or nil
	reason string  // why local is unavailable or fell back from cuda
	// runtime is what runs local: runtimeGo, runtimeORT, or "" (none).
	runtime string
	batch   *batcher
	log     *slog.Logger

	// mu guards local, remote and reason against Close: runs hold it shared.
	mu sync.RWMutex

	requests, texts, batches, batchedTexts, errs, remoteFallbacks, remoteCalls atomic.Uint64
}

// New builds a registry: it validates each spec, checks each model file's
// sha256, and opens each model: a linear model written by tools/train runs in
// Go (runtime auto, on the CPU), any other in an ONNX Runtime session (on CUDA
// when asked and possible). A spec error or checksum mismatch fails New. A
// missing ONNX Runtime (no cgo, no library) does not: the models that need it
// report unavailable in Status and their Infer calls fail with ErrUnavailable,
// so a stage using them applies its failure mode. The library is looked for
// only when a model needs it.
func New(ctx context.Context, o Options) (*Registry, error) {
	o = o.withDefaults()
	r := &Registry{opts: o, models: make(map[string]*model)}
	for _, raw := range o.Models {
		m, err := r.open(ctx, raw)
		if err != nil {
			r.Close()
			return nil, err
		}
		if _, dup := r.models[m.spec.Name]; dup {
			r.Close()
			return nil, fmt.Errorf("model %q: declared twice", m.spec.Name)
		}
		r.models[m.spec.Name] = m
		r.order = append(r.order, m.spec.Name)
	}
	return r, nil
}

// findLibrary looks for ONNX Runtime once, the first time a model needs it, and returns why it
// cannot be used (nil when it can).
func (r *Registry) findLibrary() error {
	if r.libDone {
		return r.libErr
	}
	r.libDone = true
	if !CgoEnabled {
		r.libErr = errNoCgo
	} else {
		r.library, r.tried, r.libErr = FindLibrary(r.opts.LibraryPath)
	}
	if r.libErr != nil {
		r.opts.Logger.Warn("infer: ONNX Runtime unavailable", "err", r.libErr)
	}
	return r.libErr
}

func (r *Registry) open(_ context.Context, raw ModelSpec) (*model, error) {
	s := raw.withDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	pre, err := NewPreprocessor(s.Preprocessor)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", s.Name, err)
	}
	m := &model{spec: s, pre: pre, log: r.opts.Logger.With("model", s.Name)}
	if s.File != "" {
		path := s.File
		if !filepath.IsAbs(path) && r.opts.BaseDir != "" {
			path = filepath.Join(r.opts.BaseDir, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("model %q: read %s: %w", s.Name, path, err)
		}
		sum := sha256.Sum256(data)
		got := hex.EncodeToString(sum[:])
		switch {
		case s.SHA256 == "":
			m.log.Warn("infer: model file has no sha256 declared", "file", path, "sha256", got)
		case !strings.EqualFold(s.SHA256, got):
			return nil, fmt.Errorf("model %q: %s: %w: declared %s, file has %s", s.Name, path, ErrChecksum, s.SHA256, got)
		}
		var lin *linearBackend
		if s.Runtime == RuntimeAuto && s.Provider != ProviderCUDA {
			var why string
			if lin, why = newLinear(data, s); lin == nil {
				m.log.Debug("infer: not a linear model; using ONNX Runtime", "why", why)
			}
		}
		switch {
		case lin != nil:
			m.local, m.runtime = lin, runtimeGo
		case r.findLibrary() != nil:
			m.reason = r.libErr.Error()
		default:
			local, err := newLocal(localOptions{
				libPath: r.library, model: data, inputs: s.Inputs, outputs: s.Outputs,
				threads: s.Threads, cuda: s.Provider == ProviderCUDA, device: s.CUDADevice,
				warnings: func(msg string, err error) {
					m.reason = msg + ": " + err.Error()
					m.log.Warn("infer: "+msg, "err", err)
				},
			})
			switch {
			case errors.Is(err, ErrUnavailable):
				m.reason = err.Error()
				m.log.Warn("infer: model unavailable", "err", err)
			case err != nil:
				return nil, fmt.Errorf("model %q: %w", s.Name, err)
			default:
				m.local, m.runtime = local, runtimeORT
			}
		}
	}
	if s.Provider == ProviderKServe {
		k, err := newKServe(s, r.opts.HTTPClient)
		if err != nil {
			m.closeBackends()
			return nil, err
		}
		m.remote = k
	}
	// A Go linear model costs a few µs a text and nothing a call: batching would only add a
	// hand-off. Batches are for ONNX Runtime and remote calls, whose cost is per call.
	if s.MaxBatch > 1 && (m.runtime != runtimeGo || m.remote != nil) {
		workers := min(runtime.GOMAXPROCS(0), 4)
		m.batch = newBatcher(s.MaxBatch, s.MaxWait, workers, m.run, func(n int) {
			m.batches.Add(1)
			m.batchedTexts.Add(uint64(n))
		})
	}
	m.log.Info("infer: model ready", "provider", s.Provider, "active", m.active(), "labels", len(s.Labels), "max_batch", s.MaxBatch)
	return m, nil
}

// Infer classifies req.Texts with req.Model. Results are in text order. It
// has the signature the `infer` host function expects of an Inferer.
func (r *Registry) Infer(ctx context.Context, req abi.InferRequest) (abi.InferResponse, error) {
	m, probs, err := r.probs(ctx, req.Model, req.Texts)
	if err != nil {
		return abi.InferResponse{}, err
	}
	return abi.InferResponse{Model: req.Model, Results: m.results(probs, len(req.Texts))}, nil
}

// Probs classifies texts with model like Infer, and returns the model's labels and its
// probabilities, one row of len(labels) per text, row-major, without building a result per
// text: the `infer_score` host function (host/hostfn) reduces them to a score and a label.
// Calls share Infer's micro-batches.
func (r *Registry) Probs(ctx context.Context, model string, texts []string) ([]string, []float32, error) {
	m, probs, err := r.probs(ctx, model, texts)
	if err != nil {
		return nil, nil, err
	}
	return m.spec.Labels, probs, nil
}

// probs runs model on texts: the checks, preprocessing and the batch (or a run of its own).
func (r *Registry) probs(ctx context.Context, model string, texts []string) (*model, []float32, error) {
	if r.closed.Load() {
		return nil, nil, ErrClosed
	}
	m, ok := r.models[model]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownModel, model)
	}
	if len(texts) > r.opts.MaxTexts {
		return nil, nil, fmt.Errorf("model %q: %w: %d > %d", model, ErrTooManyTexts, len(texts), r.opts.MaxTexts)
	}
	m.requests.Add(1)
	m.texts.Add(uint64(len(texts)))
	if len(texts) == 0 {
		return m, []float32{}, nil
	}
	inputs, err := m.pre.Encode(texts)
	if err != nil {
		m.errs.Add(1)
		return nil, nil, fmt.Errorf("model %q: preprocess: %w", model, err)
	}
	var probs []float32
	if m.batch != nil {
		probs, err = m.batch.do(ctx, inputs, len(texts))
	} else {
		m.batches.Add(1)
		m.batchedTexts.Add(uint64(len(texts)))
		probs, err = m.run(inputs, len(texts))
		// The run is over, and no backend keeps its inputs (each copies or encodes them before
		// it returns): Encode's tensors go back to its pool. A batch is not released: a job
		// whose caller left is still run with them (batcher.do).
		releaseInputs(inputs)
	}
	if err != nil {
		m.errs.Add(1)
		return nil, nil, fmt.Errorf("model %q: %w", model, err)
	}
	return m, probs, nil
}

// run runs one batch of n encoded texts: remote first when configured, then
// the local session. It returns n rows of one probability per label.
func (m *model) run(inputs []Tensor, n int) ([]float32, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var probs []float32
	var err error
	if m.remote != nil {
		m.remoteCalls.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), m.spec.KServe.Timeout)
		probs, err = m.remote.run(ctx, inputs, n)
		cancel()
		if err != nil {
			if m.local == nil {
				return nil, err
			}
			probs = nil
			m.remoteFallbacks.Add(1)
			m.log.Warn("infer: kserve failed, using local model", "err", err)
		}
	}
	if probs == nil {
		if m.local == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, m.reason)
		}
		probs, err = m.local.run(context.Background(), inputs, n)
		if err != nil {
			return nil, err
		}
	}
	if c := len(m.spec.Labels); len(probs) != n*c {
		return nil, fmt.Errorf("model output has %d values, want %d texts × %d labels", len(probs), n, c)
	}
	return probs, nil
}

// results turns n rows of probabilities (checked by run) into one result per text: the
// arg-max label, its probability, and every label's probability.
func (m *model) results(probs []float32, n int) []abi.InferResult {
	c := len(m.spec.Labels)
	out := make([]abi.InferResult, n)
	for i := range n {
		row := probs[i*c : (i+1)*c]
		best := 0
		scores := make(map[string]float64, c)
		for j, p := range row {
			scores[m.spec.Labels[j]] = float64(p)
			if p > row[best] {
				best = j
			}
		}
		out[i] = abi.InferResult{Label: m.spec.Labels[best], Score: float64(row[best]), Scores: scores}
	}
	return out
}

func (m *model) active() string {
	switch {
	case m.remote != nil:
		return ProviderKServe
	case m.local != nil:
		return m.local.name()
	}
	return "unavailable"
}

func (m *model) closeBackends() {
	if m.local != nil {
		m.local.close()
	}
	if m.remote != nil {
		m.remote.close()
	}
}

// Close stops the batchers and releases the sessions. Calls after Close fail
// with ErrClosed.
func (r *Registry) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	for _, m := range r.models {
		if m.batch != nil {
			m.batch.close()
		}
	}
	for _, m := range r.models {
		m.mu.Lock() // waits for batches in flight
		m.closeBackends()
		m.local, m.remote, m.runtime = nil, nil, ""
		m.reason = ErrClosed.Error()
		m.mu.Unlock()
	}
	return nil
}
