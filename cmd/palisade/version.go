package main

import (
	"context"
	"fmt"

	"github.com/added060/palisade/host/version"
)

func init() {
	register(command{name: "version", summary: "print this binary's version (also --version)", cmd: &versionCmd{}})
}

// versionCmd is `palisade version`; `palisade --version` prints the same line (root.Version).
type versionCmd struct{}

func (versionCmd) Run(_ context.Context, env *cliEnv) error {
	fmt.Fprintln(env.Stdout, version.String())
	return nil
}
