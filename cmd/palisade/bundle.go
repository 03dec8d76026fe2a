package main

import (
	"context"
	"fmt"

	"github.com/added060/palisade/host/bundle"
)

func init() {
	register(command{name: "bundle", summary: "policy bundles: pin", run: runBundle})
}

func runBundle(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "usage: palisade bundle pin DIR")
		return exitUsage
	}
	switch args[0] {
	case "pin":
		if len(args) != 2 {
			fmt.Fprintln(env.Stderr, "usage: palisade bundle pin DIR")
			return exitUsage
		}
		n, err := bundle.Pin(args[1])
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade bundle pin:", err)
			return exitFail
		}
		if _, err := bundle.LoadManifest(args[1]); err != nil {
			fmt.Fprintln(env.Stderr, "palisade bundle pin:", err)
			return exitFail
		}
		fmt.Fprintf(env.Stdout, "pinned %d stage(s) in %s\n", n, args[1])
		return exitOK
	}
	fmt.Fprintf(env.Stderr, "palisade bundle: unknown subcommand %q\n", args[0])
	return exitUsage
}
