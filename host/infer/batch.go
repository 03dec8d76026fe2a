package infer

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// batcher gathers the encoded inputs of concurrent callers into
// micro-batches of at most maxBatch texts and runs each batch with one model
// call. With maxWait 0 it never waits: a free worker takes the first job and
// whatever queued behind it while the workers were busy, so a lone call pays
// nothing and load forms the batches. With maxWait > 0 it waits at most that
// long after the first job for more. Callers encode
// their own texts first (in parallel), the batch only concatenates tensors.
// A request larger than maxBatch runs as its own batch. workers batches may
// run at once; while they are busy, arrivals queue and form the next, larger
// batch. With maxWait 0, a caller that finds a batch slot free and nothing
// queued runs its own batch on its own goroutine (issue 27: no hand-off to a
// worker and back, two goroutine wake-ups a call, when there is nothing to
// batch with); the workers serve what queues while every slot is taken.
type batcher struct {
	maxBatch int
	maxWait  time.Duration
	jobs     chan *job
	slots    chan struct{}                                   // one token per batch running (at most workers)
	run      func(inputs []Tensor, n int) ([]float32, error) // n rows of probabilities, row-major
	onBatch  func(texts int)
	done     chan struct{}
	queued   atomic.Int64 // jobs handed to the workers (a caller that found no free slot)
}

type job struct {
	inputs []Tensor
	n      int       // texts (rows)
	probs  []float32 // its n rows of the batch's output
	err    error
	ready  chan struct{}
}

func newBatcher(maxBatch int, maxWait time.Duration, workers int, run func([]Tensor, int) ([]float32, error), onBatch func(int)) *batcher {
	b := &batcher{
		maxBatch: maxBatch,
		maxWait:  maxWait,
		jobs:     make(chan *job, 4*maxBatch),
		slots:    make(chan struct{}, workers),
		run:      run,
		onBatch:  onBatch,
		done:     make(chan struct{}),
	}
	for range workers {
		go b.loop()
	}
	return b
}

// do submits n encoded texts and waits for their rows of probabilities (row-major) or ctx.
func (b *batcher) do(ctx context.Context, inputs []Tensor, n int) ([]float32, error) {
	j := &job{inputs: inputs, n: n, ready: make(chan struct{})}
	if b.maxWait <= 0 && len(b.jobs) == 0 {
		select {
		case b.slots <- struct{}{}: // a slot is free and nothing waits: run it here
			select {
			case <-b.done:
				<-b.slots
				return nil, ErrClosed
			default:
			}
			b.runBatch([]*job{j}, n)
			<-b.slots
			return j.probs, j.err
		default:
		}
	}
	select {
	case b.jobs <- j:
		b.queued.Add(1)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		return nil, ErrClosed
	}
	select {
	case <-j.ready:
		return j.probs, j.err
	case <-ctx.Done():
		return nil, ctx.Err() // the batch still runs; its result is dropped
	case <-b.done:
		// Closed: a queued job may never run. Prefer a result that is ready.
		select {
		case <-j.ready:
			return j.probs, j.err
		default:
			return nil, ErrClosed
		}
	}
}

func (b *batcher) close() { close(b.done) }

func (b *batcher) loop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var carry *job // a job that did not fit the previous batch
	for {
		var first *job
		if carry != nil {
			first, carry = carry, nil
		} else {
			select {
			case first = <-b.jobs:
			case <-b.done:
				return
			}
		}
		// A slot before the batch is formed: while callers run batches of their own in every
		// slot, arrivals queue behind first and join its batch.
		select {
		case b.slots <- struct{}{}:
		case <-b.done:
			return
		}
		batch := []*job{first}
		n := first.n
		if n < b.maxBatch && b.maxWait <= 0 {
			// Opportunistic: take what queued while the workers were busy,
			// never wait for more.
		drain:
			for n < b.maxBatch {
				select {
				case j := <-b.jobs:
					if n+j.n > b.maxBatch {
						carry = j
						break drain
					}
					batch = append(batch, j)
					n += j.n
				default:
					break drain
				}
			}
		} else if n < b.maxBatch {
			timer.Reset(b.maxWait)
		gather:
			for n < b.maxBatch {
				select {
				case j := <-b.jobs:
					if n+j.n > b.maxBatch {
						carry = j
						break gather
					}
					batch = append(batch, j)
					n += j.n
				case <-timer.C:
					break gather
				case <-b.done:
					break gather
				}
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		b.runBatch(batch, n)
		<-b.slots
	}
}

func (b *batcher) runBatch(batch []*job, n int) {
	if b.onBatch != nil {
		b.onBatch(n)
	}
	inputs := batch[0].inputs
	var err error
	if len(batch) > 1 {
		parts := make([][]Tensor, len(batch))
		for i, j := range batch {
			parts[i] = j.inputs
		}
		inputs, err = concatRows(parts)
	}
	var probs []float32
	if err == nil {
		probs, err = b.run(inputs, n)
	}
	if err == nil && len(probs)%n != 0 {
		err = fmt.Errorf("model output has %d values for %d texts", len(probs), n)
	}
	off := 0
	for _, j := range batch {
		if err != nil {
			j.err = err
		} else {
			w := len(probs) / n
			j.probs = probs[off*w : (off+j.n)*w : (off+j.n)*w]
		}
		off += j.n
		close(j.ready)
	}
}

// concatRows stacks the same-named 2-D tensors of several requests along the
// batch dimension, padding the second dimension with zeros to the widest
// (sparse indices/values, token ids and masks all pad with 0).
func concatRows(parts [][]Tensor) ([]Tensor, error) {
	out := make([]Tensor, len(parts[0]))
	for i := range out {
		var rows, width int64
		for _, p := range parts {
			if len(p) != len(out) || len(p[i].Shape) != 2 || p[i].Name != parts[0][i].Name {
				return nil, fmt.Errorf("batch: input %d: tensors differ in name or rank", i)
			}
			rows += p[i].Shape[0]
			width = max(width, p[i].Shape[1])
		}
		t := Tensor{Name: parts[0][i].Name, Shape: []int64{rows, width}}
		isInt := parts[0][i].Int64 != nil
		if isInt {
			t.Int64 = make([]int64, rows*width)
		} else {
			t.Float32 = make([]float32, rows*width)
		}
		var r int64
		for _, p := range parts {
			src, w := p[i], p[i].Shape[1]
			for k := range src.Shape[0] {
				if isInt {
					copy(t.Int64[(r+k)*width:], src.Int64[k*w:(k+1)*w])
				} else {
					copy(t.Float32[(r+k)*width:], src.Float32[k*w:(k+1)*w])
				}
			}
			r += src.Shape[0]
		}
		out[i] = t
	}
	return out, nil
}
