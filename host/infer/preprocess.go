package infer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tensor is one named model input built by a Preprocessor. Exactly one of
// Float32 and Int64 is set; Shape's first dimension is the batch.
type Tensor struct {
	Name    string
	Shape   []int64
	Float32 []float32
	Int64   []int64

	pooled *sparseTensors // Encode's pooled memory holding this tensor (releaseInputs); nil = none
}

// Preprocessor turns texts into a model's inputs. It must be safe for
// concurrent use and deterministic: the trainer and the runtime share it, so
// a text encodes the same way at training and at inference.
//
// Hashed n-grams produce one dense float input; a tokenizer for a transformer
// model would produce int64 input_ids and attention_mask tensors through the
// same interface.
type Preprocessor interface {
	// Kind names the preprocessor (PreprocessorSpec.Kind).
	Kind() string
	// Encode returns the model inputs for a batch of texts.
	Encode(texts []string) ([]Tensor, error)
}

// PreprocessorSpec declares a preprocessor in a bundle's model entry.
type PreprocessorSpec struct {
	// Kind selects the preprocessor: "hashed-ngrams" (the only kind today).
	Kind string `yaml:"kind" json:"kind"`
	// Format is how the features reach the model: "sparse" (default) gives
	// two inputs, int64 "indices" [batch, K] and float "values" [batch, K],
	// K = the most features of any text in the batch, padded with index 0 and
	// value 0; "dense" gives one float input "features" [batch, Dim].
	Format string `yaml:"format,omitempty" json:"format,omitempty"`
	// Dim is the feature space size (hash buckets); 0 = 16384.
	Dim int `yaml:"dim,omitempty" json:"dim,omitempty"`
	// CharMin, CharMax bound the character n-gram sizes; 0,0 = 3..5.
	CharMin int `yaml:"char_min,omitempty" json:"char_min,omitempty"`
	CharMax int `yaml:"char_max,omitempty" json:"char_max,omitempty"`
	// WordMax is the longest word n-gram (1 = unigrams); 0 = 2, -1 = no words.
	WordMax int `yaml:"word_max,omitempty" json:"word_max,omitempty"`
	// MaxBytes truncates each text before hashing; 0 = 8192.
	MaxBytes int `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
}

// KindHashedNgrams is the hashed character and word n-gram preprocessor.
const KindHashedNgrams = "hashed-ngrams"

// Feature formats of the hashed n-gram preprocessor, and its input names.
const (
	FormatSparse  = "sparse"
	FormatDense   = "dense"
	InputIndices  = "indices"
	InputValues   = "values"
	InputFeatures = "features"
)

// InputNames are the model inputs the spec's preprocessor fills, in order.
func (s PreprocessorSpec) InputNames() []string {
	if s.withDefaults().Format == FormatDense {
		return []string{InputFeatures}
	}
	return []string{InputIndices, InputValues}
}

// NewPreprocessor builds the preprocessor a spec declares.
func NewPreprocessor(s PreprocessorSpec) (Preprocessor, error) {
	switch s.Kind {
	case KindHashedNgrams, "":
		h := &HashedNgrams{spec: s.withDefaults()}
		if h.spec.CharMin < 1 || h.spec.CharMax < h.spec.CharMin {
			return nil, fmt.Errorf("preprocessor %s: char n-gram range %d..%d is invalid", KindHashedNgrams, h.spec.CharMin, h.spec.CharMax)
		}
		if h.spec.Dim < 2 {
			return nil, fmt.Errorf("preprocessor %s: dim %d is too small", KindHashedNgrams, h.spec.Dim)
		}
		if h.spec.Format != FormatSparse && h.spec.Format != FormatDense {
			return nil, fmt.Errorf("preprocessor %s: format %q: want sparse or dense", KindHashedNgrams, h.spec.Format)
		}
		return h, nil
	}
	return nil, fmt.Errorf("preprocessor kind %q: %w", s.Kind, ErrUnknownKind)
}

func (s PreprocessorSpec) withDefaults() PreprocessorSpec {
	if s.Kind == "" {
		s.Kind = KindHashedNgrams
	}
	if s.Format == "" {
		s.Format = FormatSparse
	}
	if s.Dim == 0 {
		s.Dim = 16384
	}
	if s.CharMin == 0 && s.CharMax == 0 {
		s.CharMin, s.CharMax = 3, 5
	}
	if s.WordMax == 0 {
		s.WordMax = 2
	}
	if s.MaxBytes == 0 {
		s.MaxBytes = 8192
	}
	return s
}

// HashedNgrams maps a text to a fixed-size, L2-normalised vector of hashed
// n-gram counts: character n-grams of the lower-cased text (with a space on
// each side, over bytes) and word n-grams. Each n-gram's bucket is FNV-1a
// (32-bit) of a kind prefix and the n-gram, modulo Dim.
type HashedNgrams struct {
	spec PreprocessorSpec
}

// Kind implements Preprocessor.
func (h *HashedNgrams) Kind() string { return KindHashedNgrams }

// Dim is the width of the feature vector.
func (h *HashedNgrams) Dim() int { return h.spec.Dim }

// Spec returns the spec with defaults applied.
func (h *HashedNgrams) Spec() PreprocessorSpec { return h.spec }

// Encode implements Preprocessor: indices and values [len(texts), K]
// (sparse), or one float32[len(texts), Dim] tensor (dense).
func (h *HashedNgrams) Encode(texts []string) ([]Tensor, error) {
	if h.spec.Format == FormatDense {
		return h.encodeDense(texts), nil
	}
	// Every text's features go into one pooled scratch, one after the other (starts), so a call
	// allocates only the two tensors it returns.
	sc := sparseScratch.Get().(*sparseBufs)
	defer sc.put()
	k := 1
	for _, t := range texts {
		sc.starts = append(sc.starts, len(sc.idx))
		sc.idx, sc.val = h.appendSparse(sc.idx, sc.val, t)
		k = max(k, len(sc.idx)-sc.starts[len(sc.starts)-1])
	}
	sc.starts = append(sc.starts, len(sc.idx))
	n := int64(len(texts))
	// The two tensors, their shapes and their data come from a pool: the registry gives them
	// back (releaseInputs) once the model's run is over; a caller that does not keeps them.
	st := sparseTensorPool.Get().(*sparseTensors)
	ind := resize(st.ind, len(texts)*k)
	vals := resize(st.vals, len(texts)*k)
	for i := range texts {
		from, to := sc.starts[i], sc.starts[i+1]
		row := ind[i*k : (i+1)*k]
		for j, x := range sc.idx[from:to] {
			row[j] = int64(x)
		}
		copy(vals[i*k:], sc.val[from:to])
	}
	st.ind, st.vals, st.shapes = ind, vals, [4]int64{n, int64(k), n, int64(k)}
	st.t = [2]Tensor{
		{Name: InputIndices, Shape: st.shapes[0:2:2], Int64: ind, pooled: st},
		{Name: InputValues, Shape: st.shapes[2:4:4], Float32: vals, pooled: st},
	}
	return st.t[:], nil
}

// sparseTensors is what Encode returns for the sparse format: the indices and values tensors,
// their shapes (each its own, capped, as two separate slices were) and their data, pooled.
type sparseTensors struct {
	t      [2]Tensor
	shapes [4]int64
	ind    []int64
	vals   []float32
}

var sparseTensorPool = sync.Pool{New: func() any { return new(sparseTensors) }}

// resize returns s with length n, zeroed (a row shorter than the longest is padded with
// zeros), reusing its array when it is large enough.
func resize[T int64 | float32](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// releaseInputs gives tensors that Encode returned back to its pool; call it only once
// nothing reads them any more (the registry does, after the model's run returned). Tensors
// of another origin are left alone, and so are large ones (the pool keeps no long batch).
func releaseInputs(ts []Tensor) {
	if len(ts) == 0 || ts[0].pooled == nil {
		return
	}
	st := ts[0].pooled
	if &st.t[0] != &ts[0] || cap(st.ind) > 64<<10 {
		return // not Encode's slice as it returned it, or too large to keep
	}
	st.t = [2]Tensor{}
	sparseTensorPool.Put(st)
}

func (h *HashedNgrams) encodeDense(texts []string) []Tensor {
	d := h.spec.Dim
	data := make([]float32, len(texts)*d)
	for i, t := range texts {
		idx, val := h.Sparse(t)
		row := data[i*d : (i+1)*d]
		for j, k := range idx {
			row[k] = val[j]
		}
	}
	return []Tensor{{Name: InputFeatures, Shape: []int64{int64(len(texts)), int64(d)}, Float32: data}}
}

// Sparse returns the non-zero features of text as sorted bucket indices and
// their values. The trainer uses it directly.
func (h *HashedNgrams) Sparse(text string) ([]int32, []float32) {
	idx, val := h.appendSparse(nil, nil, text)
	return idx[:len(idx):len(idx)], val
}

// sparseBufs is Encode's scratch: the features of each text appended, text i's from starts[i].
type sparseBufs struct {
	idx    []int32
	val    []float32
	starts []int
}

var sparseScratch = sync.Pool{New: func() any { return new(sparseBufs) }}

// put returns the scratch to the pool, unless a long batch grew it past 1 MiB.
func (b *sparseBufs) put() {
	if cap(b.idx) > 256<<10 {
		return
	}
	b.idx, b.val, b.starts = b.idx[:0], b.val[:0], b.starts[:0]
	sparseScratch.Put(b)
}

// appendSparse appends text's features (Sparse) to idx and val.
func (h *HashedNgrams) appendSparse(idx []int32, val []float32, text string) ([]int32, []float32) {
	if len(text) > h.spec.MaxBytes {
		cut := h.spec.MaxBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut-- // do not split a UTF-8 sequence
		}
		text = text[:cut]
	}
	lower := strings.ToLower(text)
	padded := " " + lower + " "
	var words []string
	if h.spec.WordMax > 0 {
		words = strings.FieldsFunc(lower, func(r rune) bool { return unicode.IsSpace(r) })
	}
	// Every n-gram's bucket goes into one slice; sorted, a run of equal buckets is one
	// feature and its length the n-gram count (no map, no joined word n-grams).
	size := 0
	for n := h.spec.CharMin; n <= h.spec.CharMax; n++ {
		size += max(0, len(padded)-n+1)
	}
	for n := 1; n <= h.spec.WordMax; n++ {
		size += max(0, len(words)-n+1)
	}
	dim := uint32(h.spec.Dim)
	at := len(idx)
	idx = slices.Grow(idx, size)
	grams := idx[at:at]
	for n := h.spec.CharMin; n <= h.spec.CharMax; n++ {
		for i := 0; i+n <= len(padded); i++ {
			grams = append(grams, int32(fnv1a('c', padded[i:i+n])%dim))
		}
	}
	for n := 1; n <= h.spec.WordMax; n++ {
		for i := 0; i+n <= len(words); i++ {
			grams = append(grams, int32(fnv1aWords('w', words[i:i+n])%dim))
		}
	}
	slices.Sort(grams)
	out := grams[:0] // the runs' buckets, written over the slice as it is read
	vat := len(val)
	val = slices.Grow(val, len(grams))
	var norm float64
	for i := 0; i < len(grams); {
		j := i + 1
		for j < len(grams) && grams[j] == grams[i] {
			j++
		}
		v := float32(1 + math.Log(float64(j-i))) // sublinear term frequency
		out = append(out, grams[i])
		val = append(val, v)
		norm += float64(v) * float64(v)
		i = j
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range val[vat:] {
			val[vat+i] *= inv
		}
	}
	return idx[:at+len(out)], val
}

// fnv1aWords is fnv1a over prefix then words joined by single spaces, without joining them.
func fnv1aWords(prefix byte, words []string) uint32 {
	const prime = 16777619
	h := fnv1a(prefix, words[0])
	for _, w := range words[1:] {
		h ^= ' '
		h *= prime
		for i := 0; i < len(w); i++ {
			h ^= uint32(w[i])
			h *= prime
		}
	}
	return h
}

// fnv1a is 32-bit FNV-1a over prefix then s, without allocating.
func fnv1a(prefix byte, s string) uint32 {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	h ^= uint32(prefix)
	h *= prime
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= prime
	}
	return h
}
