// Package host_test checks the import arrows of host/: a wrong arrow fails `make test`.
package host_test

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/added060/palisade/"

// forbidden lists, per package, packages it must not import (directly or not).
var forbidden = map[string][]string{
	"host/mcp":        {"host/", "github.com/labstack/echo", "github.com/extism", "github.com/nats-io"},
	"host/config":     {"host/", "github.com/labstack/echo", "github.com/extism", "github.com/nats-io"},
	"host/firstparty": {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway", "github.com/labstack/echo", "github.com/nats-io"},
	"host/plugin":     {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway", "github.com/labstack/echo", "github.com/nats-io"},
	"host/hostfn":     {"host/engine", "host/proxy", "host/chain", "host/bundle", "host/gateway", "host/llm", "host/infer"},
	"host/chain":      {"host/bundle", "host/engine", "host/proxy", "host/gateway", "host/admin", "github.com/labstack/echo", "github.com/nats-io", "host/telemetry", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	"host/bundle":     {"host/engine", "host/proxy", "host/gateway", "host/admin"},
	"host/audit":      {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway", "github.com/extism", "github.com/nats-io/nats-server"},
	"host/llm":        {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway"},
	"host/infer":      {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway"},
	"host/infer/onnx": {"host/"},
	// The trainer fits, writes and scores a model; tools/train and host/tune drive it.
	"host/infer/train":         {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway", "host/hostfn", "host/tune", "host/audit", "cmd/", "tools/"},
	"host/auditsink":           {"host/engine", "host/proxy", "host/gateway", "host/chain", "host/bundle", "host/plugin", "cmd/", "github.com/nats-io/nats-server", "github.com/extism"},
	"host/auditsink/pgtest":    {"host/", "github.com/"},
	"host/version":             {"host/", "github.com/"},
	"host/bus":                 {"host/"},
	"host/enginesock":          {"host/"},
	"host/token":               {"host/", "github.com/labstack/echo"},
	"host/wrap":                {"host/"},
	"host/scaffold":            {"host/"},
	"host/internal/sse":        {"host/"},
	"host/internal/atomicfile": {"host/"},
	// The JSON members the hand encoders of host/chain and host/audit share: no host package.
	"host/internal/jsonenc":            {"host/", "github.com/labstack/echo", "github.com/nats-io"},
	"host/internal/jsonenc/everyfield": {"host/", "github.com/"},
	"host/conformance":                 {"host/chain", "host/bundle", "host/engine", "host/proxy", "host/gateway"},
	"host/internal/testop":             {"host/"},
	// Tracing setup and W3C propagation: the proxy, engine and chain take its tracer or the span
	// in their context, so it imports none of them.
	"host/telemetry": {"host/"},
	// A test's OTLP receiver, a program of its own: it speaks the wire format, nothing of ours.
	"host/internal/otlprecv": {"host/", "go.opentelemetry.io/otel"},
	"host/internal/testenv":  {"host/engine", "host/proxy", "host/gateway", "cmd/"},
	"host/policytest":        {"host/proxy", "host/gateway", "github.com/labstack/echo"},
	// The engine: decides; imports no transport, no hook built on it and no server.
	"host/engine": {"host/proxy", "host/gateway", "host/admin", "host/selfmcp", "host/approval", "host/pin", "host/token", "host/bus", "host/infer", "host/llm", "cmd/", "github.com/labstack/echo", "github.com/nats-io/nats-server", "host/telemetry", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	// Hooks the engine calls and clients of the engine: never a transport.
	"host/approval": {"host/proxy", "host/gateway", "host/admin", "host/selfmcp", "cmd/"},
	"host/pin":      {"host/proxy", "host/gateway", "host/admin", "host/selfmcp", "host/approval", "cmd/"},
	"host/selfmcp":  {"host/proxy", "host/gateway", "host/admin", "cmd/"},
	"host/admin":    {"host/proxy", "host/gateway", "host/selfmcp", "cmd/"},
	// Transports: bytes in and out of an exchange; they depend on the engine, never on the
	// hooks (approval, pinning, tokens) or servers built on it.
	"host/proxy": {"host/gateway", "host/admin", "host/selfmcp", "host/approval", "host/pin", "host/token", "cmd/", "github.com/nats-io/nats-server", "host/telemetry", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	// The gateway wires serve's parts together; only cmd/ sits above it.
	"host/gateway":   {"cmd/"},
	"host/authn":     {"host/engine", "host/proxy", "host/gateway", "host/chain", "host/bundle", "host/config", "github.com/nats-io"},
	"sdk/go/abi":     {"host/", "github.com/extism"},
	"sdk/go/glob":    {"host/", "github.com/extism"},
	"sdk/go/exclude": {"host/", "github.com/extism"},
	// Tuning reads audit events and writes a bundle folder: it serves and decides nothing.
	"host/tune":             {"host/engine", "host/proxy", "host/gateway", "host/admin", "cmd/", "github.com/labstack/echo"},
	"plugins/rules/ruleset": {"host/", "github.com/extism"},
}

// TestEveryHostPackageHasArrows: a new package under host/ gets its line in forbidden.
func TestEveryHostPackageHasArrows(t *testing.T) {
	cmd := exec.Command("go", "list", "./host/...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, mod)
		if p == "host" {
			continue // this test
		}
		if _, ok := forbidden[p]; !ok {
			t.Errorf("%s has no entry in forbidden: say what it must not import", p)
		}
	}
}

func TestImportArrows(t *testing.T) {
	for pkg, bad := range forbidden {
		t.Run(pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "./"+pkg)
			cmd.Dir = ".."
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list %s: %v\n%s", pkg, err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, b := range bad {
					target := b
					if !strings.Contains(b, ".") { // a path inside this module
						target = mod + b
					}
					if strings.HasPrefix(dep, target) && dep != mod+pkg {
						t.Errorf("%s imports %s (forbidden: %s)", pkg, dep, b)
					}
				}
			}
		})
	}
	// Only host/bus imports nats-server (outside tests).
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./host/...", "./cmd/...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "github.com/nats-io/nats-server") && f[0] != mod+"host/bus" && !strings.Contains(f[0], "testenv") {
				t.Errorf("%s imports nats-server; only host/bus may", f[0])
			}
		}
	}
}
