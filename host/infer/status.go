package infer

import (
	"fmt"
	"io"
	"strings"
)

// Status is what `palisade doctor` prints and metrics export about inference.
type Status struct {
	// Cgo is false in a CGO_ENABLED=0 build: no local model can run.
	Cgo bool `json:"cgo"`
	// Library is the ONNX Runtime library in use; "" when none was found.
	Library string `json:"library,omitempty"`
	// LibraryCandidates are the places FindLibrary looked, in order.
	LibraryCandidates []LibraryCandidate `json:"library_candidates,omitempty"`
	// LibraryError says why no library could be used.
	LibraryError string `json:"library_error,omitempty"`
	// RuntimeVersion is ONNX Runtime's version once loaded.
	RuntimeVersion string `json:"runtime_version,omitempty"`
	// CUDA is "available", "unavailable: <why>", or "" when not checked
	// (Diagnose with cuda=true checks it).
	CUDA string `json:"cuda,omitempty"`
	// Models, in declaration order.
	Models []ModelStatus `json:"models"`
}

// ModelStatus describes one model and its counters since New.
type ModelStatus struct {
	Name     string `json:"name"`
	Provider string `json:"provider"` // as configured
	Active   string `json:"active"`   // cpu, cuda, kserve or unavailable
	Local    string `json:"local"`    // provider of the local session, or unavailable
	// Runtime is what evaluates the local model: "go" (a linear model, in Go), "onnxruntime",
	// or "" when there is none.
	Runtime  string   `json:"runtime,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	File     string   `json:"file,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Labels   []string `json:"labels"`
	MaxBatch int      `json:"max_batch"`

	Requests        uint64 `json:"requests"`
	Texts           uint64 `json:"texts"`
	Batches         uint64 `json:"batches"`
	BatchedTexts    uint64 `json:"batched_texts"`
	Errors          uint64 `json:"errors"`
	RemoteCalls     uint64 `json:"remote_calls"`
	RemoteFallbacks uint64 `json:"remote_fallbacks"`
}

// Available reports whether the model can answer now.
func (s ModelStatus) Available() bool { return s.Active != "unavailable" }

// Status reports the runtime and every model.
func (r *Registry) Status() Status {
	st := Status{Cgo: CgoEnabled, Library: r.library, LibraryCandidates: r.tried, RuntimeVersion: RuntimeVersion()}
	if r.libErr != nil {
		st.LibraryError = r.libErr.Error()
	}
	for _, name := range r.order {
		m := r.models[name]
		m.mu.RLock()
		local := "unavailable"
		if m.local != nil {
			local = m.local.name()
		}
		ms := ModelStatus{
			Name: name, Provider: m.spec.Provider, Active: m.active(), Local: local, Runtime: m.runtime, Reason: m.reason,
			File: m.spec.File, SHA256: m.spec.SHA256, Labels: m.spec.Labels, MaxBatch: m.spec.MaxBatch,
		}
		m.mu.RUnlock()
		ms.Requests = m.requests.Load()
		ms.Texts = m.texts.Load()
		ms.Batches = m.batches.Load()
		ms.BatchedTexts = m.batchedTexts.Load()
		ms.Errors = m.errs.Load()
		ms.RemoteCalls = m.remoteCalls.Load()
		ms.RemoteFallbacks = m.remoteFallbacks.Load()
		st.Models = append(st.Models, ms)
	}
	return st
}

// Models lists the declared model names in order.
func (r *Registry) Models() []string { return append([]string(nil), r.order...) }

// Spec returns a model's spec with defaults applied.
func (r *Registry) Spec(name string) (ModelSpec, bool) {
	m, ok := r.models[name]
	if !ok {
		return ModelSpec{}, false
	}
	return m.spec, true
}

// WriteText prints the status for `palisade doctor`: where the library was
// looked for and found, the runtime version, and each model's provider,
// state and counters.
func (s Status) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxruntime: cgo=%v", s.Cgo)
	switch {
	case s.Library != "":
		fmt.Fprintf(&b, " library=%s version=%s\n", s.Library, s.RuntimeVersion)
	case s.LibraryError != "":
		fmt.Fprintf(&b, " unavailable: %s\n", s.LibraryError)
	default:
		fmt.Fprintf(&b, " not needed (no model runs on it)\n")
	}
	if s.CUDA != "" {
		fmt.Fprintf(&b, "  cuda: %s\n", s.CUDA)
	}
	for _, c := range s.LibraryCandidates {
		found := "missing"
		if c.Found {
			found = "found"
		}
		fmt.Fprintf(&b, "  looked in (%s) %s: %s\n", c.Source, c.Path, found)
	}
	for _, m := range s.Models {
		fmt.Fprintf(&b, "model %s: provider=%s active=%s local=%s runtime=%s max_batch=%d labels=%d\n", m.Name, m.Provider, m.Active, m.Local, m.Runtime, m.MaxBatch, len(m.Labels))
		if m.Reason != "" {
			fmt.Fprintf(&b, "  reason: %s\n", m.Reason)
		}
		fmt.Fprintf(&b, "  requests=%d texts=%d batches=%d errors=%d remote_calls=%d remote_fallbacks=%d\n",
			m.Requests, m.Texts, m.Batches, m.Errors, m.RemoteCalls, m.RemoteFallbacks)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Diagnose finds and loads the ONNX Runtime library as New would (the
// configured path, else the search) and, with cuda, tries to append the CUDA
// execution provider to a session's options. It is what `palisade doctor`
// prints when no bundle is loaded. Loading is process-wide and kept.
func Diagnose(libraryPath string, cuda bool) Status {
	st := Status{Cgo: CgoEnabled}
	if !CgoEnabled {
		st.LibraryError = errNoCgo.Error()
		return st
	}
	lib, tried, err := FindLibrary(libraryPath)
	st.LibraryCandidates = tried
	if err == nil {
		err = initORT(lib)
	}
	if err != nil {
		st.LibraryError = err.Error()
		return st
	}
	st.Library, st.RuntimeVersion = lib, RuntimeVersion()
	if cuda {
		if err := probeCUDA(); err != nil {
			st.CUDA = "unavailable: " + err.Error()
		} else {
			st.CUDA = "available"
		}
	}
	return st
}

// Unavailable returns why model name cannot answer now (every model when name is ""), or nil
// when it can. A bundle whose stage infers with an unavailable model is refused unless the
// operator serves degraded (host/bundle).
func (r *Registry) Unavailable(name string) error {
	names := r.order
	if name != "" {
		if _, ok := r.models[name]; !ok {
			return fmt.Errorf("model %q is not declared in the bundle's models", name)
		}
		names = []string{name}
	}
	for _, n := range names {
		for _, ms := range r.Status().Models {
			if ms.Name == n && !ms.Available() {
				reason := ms.Reason
				if reason == "" && r.libErr != nil {
					reason = r.libErr.Error()
				}
				return fmt.Errorf("model %s is unavailable: %s", n, reason)
			}
		}
	}
	return nil
}
