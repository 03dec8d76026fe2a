package infer

import (
	"context"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// batcher gathers the texts of concurrent callers into micro-batches of at
// most maxBatch texts, waiting at most maxWait after the first one arrives,
// and runs each batch with one model call. A request larger than maxBatch
// runs as its own batch. workers batches may run at once; while they are
// busy, arrivals queue and form the next, larger batch.
type batcher struct {
	maxBatch int
	maxWait  time.Duration
	jobs     chan *job
	run      func(texts []string) ([]abi.InferResult, error)
	onBatch  func(texts int)
	done     chan struct{}
}

type job struct {
	texts   []string
	results []abi.InferResult
	err     error
	ready   chan struct{}
}

func newBatcher(maxBatch int, maxWait time.Duration, workers int, run func([]string) ([]abi.InferResult, error), onBatch func(int)) *batcher {
	b := &batcher{
		maxBatch: maxBatch,
		maxWait:  maxWait,
		jobs:     make(chan *job, 4*maxBatch),
		run:      run,
		onBatch:  onBatch,
		done:     make(chan struct{}),
	}
	for range workers {
		go b.loop()
	}
	return b
}

// do submits texts and waits for their results or ctx.
func (b *batcher) do(ctx context.Context, texts []string) ([]abi.InferResult, error) {
	j := &job{texts: texts, ready: make(chan struct{})}
	select {
	case b.jobs <- j:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		return nil, ErrClosed
	}
	select {
	case <-j.ready:
		return j.results, j.err
	case <-ctx.Done():
		return nil, ctx.Err() // the batch still runs; its result is dropped
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
		batch := []*job{first}
		n := len(first.texts)
		if n < b.maxBatch {
			timer.Reset(b.maxWait)
		gather:
			for n < b.maxBatch {
				select {
				case j := <-b.jobs:
					if n+len(j.texts) > b.maxBatch {
						carry = j
						break gather
					}
					batch = append(batch, j)
					n += len(j.texts)
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
	}
}

func (b *batcher) runBatch(batch []*job, n int) {
	texts := make([]string, 0, n)
	for _, j := range batch {
		texts = append(texts, j.texts...)
	}
	if b.onBatch != nil {
		b.onBatch(len(texts))
	}
	results, err := b.run(texts)
	off := 0
	for _, j := range batch {
		if err != nil {
			j.err = err
		} else {
			j.results = results[off : off+len(j.texts) : off+len(j.texts)]
		}
		off += len(j.texts)
		close(j.ready)
	}
}
