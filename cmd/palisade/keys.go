package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/added060/palisade/host/bundle"
)

func init() {
	register(command{name: "keys", summary: "bundle signing keys: `keys generate [-o FILE]`", run: runKeys})
}

const keysUsage = `usage: palisade keys generate [-o FILE]

Writes an ed25519 private key to FILE (mode 0600, default palisade-bundle.key) and its public
key to FILE.pub. Sign bundles with the private key (palisade bundle sign --key FILE); list the
public key file under bundles.trusted_keys in each gateway's config.`

func runKeys(_ context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "generate" {
		fmt.Fprintln(env.Stderr, keysUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("keys generate", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	out := fs.String("o", "palisade-bundle.key", "private key file (the public key goes to FILE.pub)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, keysUsage)
		return exitUsage
	}
	pub, priv, err := bundle.GenerateKey()
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade keys:", err)
		return exitFail
	}
	pubPath, err := bundle.WriteKeyPair(*out, priv)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade keys:", err)
		return exitFail
	}
	fmt.Fprintf(env.Stdout, "key id %s\nprivate key %s (keep it secret)\npublic key  %s\n%s\n", bundle.KeyID(pub), *out, pubPath, bundle.EncodePublicKey(pub))
	return exitOK
}
