package main

import (
	"fmt"
	"path/filepath"

	"github.com/added060/palisade/host/wrap"
)

func init() {
	register(command{name: "wrap", summary: "rewrite an MCP server entry (Claude Desktop, Cursor, Claude Code) to run through palisade proxy", cmd: &wrapCmd{}})
	register(command{name: "unwrap", summary: "restore an MCP server entry that palisade wrap rewrote", cmd: &unwrapCmd{}})
}

// wrapFlags are the flags wrap and unwrap share.
type wrapFlags struct {
	Config   string `help:"The MCP client config to edit (default: search Claude Desktop, Cursor and Claude Code configs)." placeholder:"FILE"`
	Palisade string `help:"Palisade binary written into the entry (default: this executable)." placeholder:"PATH"`
	Server   string `arg:"" help:"The MCP server entry's name."`
}

type wrapCmd struct {
	wrapFlags `embed:""`
	Bundle    string `help:"Bundle folder the proxy uses (written into the entry)." placeholder:"DIR"`
	DataDir   string `help:"Data dir the proxy uses (written into the entry)." placeholder:"DIR"`
	// ONNXRuntime: the library written into the entry (default: the one found now).
	ONNXRuntime string `name:"onnxruntime" help:"ONNX Runtime library written into the entry (default: the one found now)." placeholder:"FILE"`
	// TrustKey and AllowUnsigned: the trust policy written into the entry (installTrust).
	TrustKey      []string `name:"trust-key" help:"Public key (a .pub file or the key text) the bundle must be signed by; its text is written into the entry. Required for a signed --bundle. Repeatable." placeholder:"KEY"`
	AllowUnsigned bool     `name:"allow-unsigned" help:"Wrap with an unsigned --bundle (writes --allow-unsigned: whoever can write the folder sets the policy)."`
}

func (w *wrapCmd) Run(env *cliEnv) error {
	if w.Bundle == "" {
		// The proxy exits at once without a bundle, and the client only sees the connection
		// close: refuse here, where the person is.
		fmt.Fprintln(env.Stderr, "palisade wrap: --bundle DIR is required: the wrapped proxy decides with it (without one the server would not start)")
		return exitCode(exitUsage)
	}
	o := w.options()
	for _, f := range []struct{ flag, v string }{{"--bundle", w.Bundle}, {"--data-dir", w.DataDir}} {
		if f.v != "" {
			abs, _ := filepath.Abs(f.v)
			o.ProxyArgs = append(o.ProxyArgs, f.flag, abs)
		}
	}
	bundleDir := ""
	if w.Bundle != "" {
		bundleDir, _ = filepath.Abs(w.Bundle)
	}
	trust, warn, err := installTrust(bundleDir, w.TrustKey, w.AllowUnsigned)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade wrap:", err)
		return exitCode(exitUsage)
	}
	if warn != "" {
		fmt.Fprintln(env.Stderr, "palisade wrap: warning:", warn)
	}
	o.ProxyArgs = append(o.ProxyArgs, trust...)
	if lib := runtimeFor(env, w.ONNXRuntime, "wrap"); lib != "" {
		o.ProxyArgs = append(o.ProxyArgs, "--onnxruntime", lib)
	}
	res, err := wrap.Wrap(o)
	return wrapDone(env, "wrap", res, err)
}

type unwrapCmd struct {
	wrapFlags `embed:""`
}

func (w *unwrapCmd) Run(env *cliEnv) error {
	res, err := wrap.Unwrap(w.options())
	return wrapDone(env, "unwrap", res, err)
}

func (w *wrapFlags) options() wrap.Options {
	return wrap.Options{Server: w.Server, Config: w.Config, Palisade: w.Palisade}
}

func wrapDone(env *cliEnv, name string, res wrap.Result, err error) error {
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade %s: %v\n", name, err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "%sped %s in %s (backup %s); restart the client to apply\n", name, res.Where, res.File, res.Backup)
	return nil
}
