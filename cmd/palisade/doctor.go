package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/infer"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "doctor", summary: "say what this machine has: ONNX Runtime, CUDA, models, NATS, data dir", cmd: &doctorCmd{}})
}

type doctorReport struct {
	Go      string          `json:"go"`
	Infer   infer.Status    `json:"infer"`
	Models  *infer.Status   `json:"bundle_models,omitempty"`
	Bundle  string          `json:"bundle,omitempty"`
	NATS    map[string]any  `json:"nats"`
	DataDir map[string]any  `json:"data_dir"`
	Problem []string        `json:"problems"`
	Extra   json.RawMessage `json:"-"`
}

type doctorCmd struct {
	Config      string `help:"Gateway config file." env:"PALISADE_CONFIG" placeholder:"FILE"`
	Bundle      string `help:"Bundle folder whose models to load (default: the config's bundle)." placeholder:"DIR"`
	ONNXRuntime string `name:"onnxruntime" help:"ONNX Runtime library (default: the config's infer.library, $$PALISADE_ONNXRUNTIME_LIB, beside the binary, build/ort, /usr/local/lib)." placeholder:"FILE"`
	CUDA        bool   `name:"cuda" help:"Also try the CUDA execution provider."`
	JSON        bool   `name:"json" help:"Print the report as JSON."`
}

func (d *doctorCmd) Run(ctx context.Context, env *cliEnv) error {
	cfgPath, bundleDir, library, cuda, asJSON := &d.Config, &d.Bundle, &d.ONNXRuntime, &d.CUDA, &d.JSON
	cfg, err := loadConfig(env, *cfgPath, map[string]string{"bundle": *bundleDir})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade doctor:", err)
		return exitCode(exitUsage)
	}
	c := cfg.WithDefaults()
	rep := doctorReport{Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, NATS: map[string]any{}, DataDir: map[string]any{"path": c.DataDir}}

	if *library == "" {
		*library = cfg.Infer.Library // the configured runtime, as every mode finds it
	}
	rep.Infer = infer.Diagnose(*library, *cuda)
	if rep.Infer.LibraryError != "" {
		rep.Problem = append(rep.Problem, "ONNX Runtime: "+rep.Infer.LibraryError+" (run `make setup-onnxruntime`); models that need it will be unavailable (linear models written by tools/train run in Go without it)")
	}
	if c.Bundle != "" {
		rep.Bundle = c.Bundle
		if m, err := bundle.LoadManifest(c.Bundle); err != nil {
			rep.Problem = append(rep.Problem, "bundle: "+err.Error())
		} else if len(m.Models) > 0 {
			var specs []infer.ModelSpec
			for i := range m.Models {
				var s infer.ModelSpec
				if err := m.Models[i].Decode(&s); err != nil {
					rep.Problem = append(rep.Problem, fmt.Sprintf("bundle models[%d]: %v", i, err))
					continue
				}
				if *cuda {
					s.Provider = infer.ProviderCUDA
				}
				specs = append(specs, s)
			}
			reg, err := infer.New(ctx, infer.Options{Models: specs, BaseDir: c.Bundle, LibraryPath: *library})
			if err != nil {
				rep.Problem = append(rep.Problem, "bundle models: "+err.Error())
			} else {
				st := reg.Status()
				rep.Models = &st
				for _, ms := range st.Models {
					if !ms.Available() {
						rep.Problem = append(rep.Problem, fmt.Sprintf("model %s unavailable: %s", ms.Name, ms.Reason))
					} else if ms.Active != ms.Provider && ms.Provider != "" {
						rep.Problem = append(rep.Problem, fmt.Sprintf("model %s runs on %s, not %s: %s", ms.Name, ms.Active, ms.Provider, ms.Reason))
					}
				}
				reg.Close()
			}
		}
	}

	url := c.NATS.URL
	if url == "" {
		url = fmt.Sprintf("nats://%s:%d", c.NATS.Host, c.NATS.Port)
		rep.NATS["mode"] = "embedded (started by palisade serve)"
	} else {
		rep.NATS["mode"] = "external"
	}
	rep.NATS["url"] = url
	id, _ := bus.LoadIdentity(c.DataDir, bus.RoleAdmin, c.NATS.Creds)
	if id != nil {
		rep.NATS["identity"] = id.Role
	}
	nc, err := bus.Dial(url, id, nats.Timeout(2*time.Second), nats.Name("palisade doctor"))
	if err != nil {
		rep.NATS["reachable"] = false
		rep.NATS["error"] = err.Error()
		if c.NATS.URL != "" {
			rep.Problem = append(rep.Problem, "NATS "+url+" unreachable: "+err.Error()+" (audit events will spool to disk)")
		}
	} else {
		rep.NATS["reachable"] = true
		rep.NATS["server"] = nc.ConnectedServerVersion()
		nc.Close()
	}

	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		rep.Problem = append(rep.Problem, "data dir: "+err.Error())
		rep.DataDir["writable"] = false
	} else {
		probe := filepath.Join(c.DataDir, ".doctor")
		werr := os.WriteFile(probe, []byte("ok"), 0o600)
		os.Remove(probe)
		rep.DataDir["writable"] = werr == nil
		if werr != nil {
			rep.Problem = append(rep.Problem, "data dir not writable: "+werr.Error())
		}
	}

	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		w := env.Stdout
		fmt.Fprintf(w, "go:            %s\n", rep.Go)
		fmt.Fprintln(w, "inference:")
		rep.Infer.WriteText(w)
		if rep.Models != nil {
			fmt.Fprintf(w, "bundle models (%s):\n", rep.Bundle)
			rep.Models.WriteText(w)
		}
		fmt.Fprintf(w, "nats:          %v %v reachable=%v\n", rep.NATS["mode"], rep.NATS["url"], rep.NATS["reachable"])
		fmt.Fprintf(w, "data dir:      %v writable=%v\n", rep.DataDir["path"], rep.DataDir["writable"])
		if len(rep.Problem) == 0 {
			fmt.Fprintln(w, "no problems found")
		}
		for _, p := range rep.Problem {
			fmt.Fprintln(w, "problem:", p)
		}
	}
	if len(rep.Problem) > 0 {
		return exitCode(exitFail)
	}
	return nil
}
