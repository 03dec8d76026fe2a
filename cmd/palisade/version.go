package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/added060/palisade/host/firstparty"
	"github.com/added060/palisade/host/version"
	"github.com/added060/palisade/sdk/go/abi"
)

func init() {
	register(command{name: "version", summary: "print this binary's version (also --version)", cmd: &versionCmd{}})
}

// versionCmd is `palisade version`; `palisade --version` prints the same line (root.Version).
// With --verbose it also says which plugins this host loads: the envelope schema it writes and
// accepts (sdk/ABI.md "Versions"), the call conventions and the module it runs natively.
type versionCmd struct {
	Verbose bool `short:"v" help:"Also print the plugin envelope schema and call conventions this host supports."`
}

func (c versionCmd) Run(_ context.Context, env *cliEnv) error {
	fmt.Fprintln(env.Stdout, version.String())
	if c.Verbose {
		fmt.Fprintf(env.Stdout, "plugin envelope schema: %s (loads plugins stating %s.0 to %s)\n", abi.Version, strings.Split(abi.Version, ".")[0], abi.Version)
		fmt.Fprintln(env.Stdout, "plugin call conventions: direct 1; Extism (compatibility)")
		if firstparty.Digest != "" {
			fmt.Fprintf(env.Stdout, "runs natively: the first-party module sha256:%s\n", firstparty.Digest)
		} else {
			fmt.Fprintln(env.Stdout, "runs natively: none (built without the first-party module's digest)")
		}
	}
	return nil
}
