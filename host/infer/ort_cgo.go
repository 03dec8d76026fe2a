//go:build cgo

package infer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ONNX Runtime keeps one environment per process: onnxruntime_go holds it in
// package state, so the registry can only share it. It is created on first use
// and lives until the process exits.
var ortEnv struct {
	sync.Mutex
	path string
	err  error
}

// CgoEnabled reports whether this binary can run ONNX Runtime at all.
const CgoEnabled = true

func initORT(path string) error {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.path != "" {
		if ortEnv.path != path {
			return fmt.Errorf("onnxruntime already loaded from %s, cannot load %s in the same process", ortEnv.path, path)
		}
		return ortEnv.err
	}
	ortEnv.path = path
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		ortEnv.err = errors.Join(ErrUnavailable, fmt.Errorf("load onnxruntime %s: %w", path, err))
	}
	return ortEnv.err
}

// RuntimeVersion is the loaded ONNX Runtime's version, or "" before loading.
func RuntimeVersion() string {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.path == "" || ortEnv.err != nil {
		return ""
	}
	return ort.GetVersion()
}

type ortBackend struct {
	sess     *ort.DynamicAdvancedSession
	outputs  int
	provider string
}

// newLocal creates an ONNX Runtime session. With o.cuda it appends the CUDA
// execution provider; if that fails it reports why through o.warnings and
// builds a CPU session instead.
func newLocal(o localOptions) (*ortBackend, error) {
	if err := initORT(o.libPath); err != nil {
		return nil, err
	}
	provider := ProviderCPU
	opts, err := sessionOptions(o.threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if o.cuda {
		if err := appendCUDA(opts, o.device); err != nil {
			if o.warnings != nil {
				o.warnings("cuda execution provider unavailable, using cpu", err)
			}
			// Appending may leave the options half-changed: start again.
			opts.Destroy()
			if opts, err = sessionOptions(o.threads); err != nil {
				return nil, err
			}
		} else {
			provider = ProviderCUDA
		}
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(o.model, o.inputs, o.outputs, opts)
	if err != nil && provider == ProviderCUDA {
		// The provider was accepted but the session could not use it (no
		// device, driver mismatch): retry on the CPU.
		if o.warnings != nil {
			o.warnings("cuda session failed, using cpu", err)
		}
		cpu, cerr := sessionOptions(o.threads)
		if cerr != nil {
			return nil, cerr
		}
		defer cpu.Destroy()
		provider = ProviderCPU
		sess, err = ort.NewDynamicAdvancedSessionWithONNXData(o.model, o.inputs, o.outputs, cpu)
	}
	if err != nil {
		return nil, fmt.Errorf("create onnxruntime session: %w", err)
	}
	return &ortBackend{sess: sess, outputs: len(o.outputs), provider: provider}, nil
}

func sessionOptions(threads int) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime session options: %w", err)
	}
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime intra-op threads: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime inter-op threads: %w", err)
	}
	return opts, nil
}

func appendCUDA(opts *ort.SessionOptions, device int) error {
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return fmt.Errorf("cuda provider options: %w", err)
	}
	defer cuda.Destroy()
	if err := cuda.Update(map[string]string{"device_id": fmt.Sprint(device)}); err != nil {
		return fmt.Errorf("cuda provider options: %w", err)
	}
	if err := opts.AppendExecutionProviderCUDA(cuda); err != nil {
		return fmt.Errorf("append cuda execution provider: %w", err)
	}
	return nil
}

func (b *ortBackend) name() string { return b.provider }

func (b *ortBackend) run(_ context.Context, inputs []Tensor, n int) ([]float32, error) {
	vals := make([]ort.Value, len(inputs))
	defer func() {
		for _, v := range vals {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for i, t := range inputs {
		var err error
		switch {
		case t.Float32 != nil:
			vals[i], err = ort.NewTensor(ort.NewShape(t.Shape...), t.Float32)
		case t.Int64 != nil:
			vals[i], err = ort.NewTensor(ort.NewShape(t.Shape...), t.Int64)
		default:
			err = errors.New("empty tensor")
		}
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", t.Name, err)
		}
	}
	outs := make([]ort.Value, b.outputs)
	if err := b.sess.Run(vals, outs); err != nil {
		return nil, fmt.Errorf("onnxruntime run: %w", err)
	}
	defer func() {
		for _, v := range outs {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	probs, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output 0 is %T, want float32 tensor", outs[0])
	}
	shape := probs.GetShape()
	if len(shape) != 2 || shape[0] != int64(n) {
		return nil, fmt.Errorf("output 0 has shape %v, want [%d, classes]", shape, n)
	}
	return append([]float32(nil), probs.GetData()...), nil
}

func (b *ortBackend) close() error { return b.sess.Destroy() }

// probeCUDA appends the CUDA execution provider to throw-away options.
func probeCUDA() error {
	opts, err := sessionOptions(1)
	if err != nil {
		return err
	}
	defer opts.Destroy()
	return appendCUDA(opts, 0)
}
