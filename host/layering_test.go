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
	"host/mcp":              {"host/", "github.com/labstack/echo", "github.com/extism", "github.com/nats-io"},
	"host/config":           {"host/", "github.com/labstack/echo", "github.com/extism", "github.com/nats-io"},
	"host/plugin":           {"host/chain", "host/bundle", "host/proxy", "host/gateway", "github.com/labstack/echo", "github.com/nats-io"},
	"host/hostfn":           {"host/proxy", "host/chain", "host/bundle", "host/gateway", "host/llm", "host/infer"},
	"host/chain":            {"host/bundle", "host/proxy", "host/gateway", "host/admin", "github.com/labstack/echo", "github.com/nats-io"},
	"host/bundle":           {"host/proxy", "host/gateway", "host/admin"},
	"host/audit":            {"host/chain", "host/bundle", "host/proxy", "host/gateway", "github.com/extism", "github.com/nats-io/nats-server"},
	"host/proxy":            {"host/gateway", "cmd/", "github.com/nats-io/nats-server"},
	"host/auditsink":        {"host/proxy", "host/gateway", "host/chain", "host/bundle", "host/plugin", "cmd/", "github.com/nats-io/nats-server", "github.com/extism"},
	"host/auditsink/pgtest": {"host/", "github.com/"},
	"host/llm":              {"host/chain", "host/bundle", "host/proxy", "host/gateway"},
	"host/infer":            {"host/chain", "host/bundle", "host/proxy", "host/gateway"},
	"host/version":          {"host/", "github.com/"},
	"sdk/go/abi":            {"host/", "github.com/extism"},
	"sdk/go/glob":           {"host/", "github.com/extism"},
	"plugins/rules/ruleset": {"host/", "github.com/extism"},
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
