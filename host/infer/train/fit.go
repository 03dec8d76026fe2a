package train

import (
	"math"
	"math/rand/v2"

	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/onnx"
)

// Options are the trainer's hyper-parameters. The zero value is not
// useful; see defaultOptions.
type Options struct {
	Epochs       int     // passes over the training set
	LearningRate float64 // AdaGrad base rate
	L2           float64 // weight decay on the rows an example touches
	Seed         uint64  // shuffling seed
}

func DefaultOptions() Options {
	return Options{Epochs: 12, LearningRate: 0.5, L2: 1e-6, Seed: 20261122}
}

// Row is one example's features.
type Row struct {
	idx []int32
	val []float32
	// Weight scales the example's loss; 0 = 1. The class-balanced weights are computed on the
	// weighted counts, so each class still weighs the same in total (OnTop rows aside).
	Weight float64
	// OnTop leaves the example out of the class-balanced weights' counts: its loss adds to its
	// class instead of diluting the class's other examples (Example.OnTop).
	OnTop bool
}

func Featurize(h *infer.HashedNgrams, ex []Example) []Row {
	rows := make([]Row, len(ex))
	for i, e := range ex {
		rows[i].idx, rows[i].val = h.Sparse(e.Text)
		rows[i].OnTop = e.OnTop
	}
	return rows
}

// Fit fits multinomial logistic regression (softmax over labels) with
// class-balanced weights and AdaGrad, single-threaded in a fixed order, so
// the same data and options give the same bits.
func Fit(rows []Row, y []int, dim, classes int, o Options) onnx.Linear {
	w := make([]float64, dim*classes)
	b := make([]float64, classes)
	gw := make([]float64, dim*classes) // AdaGrad accumulators
	gb := make([]float64, classes)
	counts := make([]float64, classes)
	sw := make([]float64, len(y))
	total := 0.0
	for i, c := range y {
		sw[i] = rows[i].Weight
		if sw[i] == 0 {
			sw[i] = 1
		}
		if rows[i].OnTop {
			continue
		}
		counts[c] += sw[i]
		total += sw[i]
	}
	weight := make([]float64, classes)
	for c := range weight {
		if counts[c] > 0 {
			weight[c] = total / (float64(classes) * counts[c])
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	z := make([]float64, classes)
	const eps = 1e-8
	for range o.Epochs {
		for _, i := range rng.Perm(len(rows)) {
			r := rows[i]
			for c := range z {
				z[c] = b[c]
			}
			for j, k := range r.idx {
				row := w[int(k)*classes : (int(k)+1)*classes]
				v := float64(r.val[j])
				for c := range z {
					z[c] += v * row[c]
				}
			}
			softmax(z)
			for c := range z {
				g := z[c]
				if c == y[i] {
					g -= 1
				}
				g *= weight[y[i]] * sw[i]
				z[c] = g // reuse z as the gradient wrt logits
				gb[c] += g * g
				b[c] -= o.LearningRate * g / (math.Sqrt(gb[c]) + eps)
			}
			for j, k := range r.idx {
				base := int(k) * classes
				v := float64(r.val[j])
				for c := range z {
					g := z[c]*v + o.L2*w[base+c]
					gw[base+c] += g * g
					w[base+c] -= o.LearningRate * g / (math.Sqrt(gw[base+c]) + eps)
				}
			}
		}
	}
	l := onnx.Linear{Dim: dim, Classes: classes, W: make([]float32, len(w)), B: make([]float32, len(b))}
	for i, v := range w {
		l.W[i] = float32(v)
	}
	for i, v := range b {
		l.B[i] = float32(v)
	}
	return l
}

func softmax(z []float64) {
	m := z[0]
	for _, v := range z {
		m = max(m, v)
	}
	var s float64
	for i := range z {
		z[i] = math.Exp(z[i] - m)
		s += z[i]
	}
	for i := range z {
		z[i] /= s
	}
}
