package main

import (
	"fmt"

	"github.com/added060/palisade/host/bundle"
)

func init() {
	register(command{name: "keys", summary: "bundle signing keys: `keys generate [-o FILE]`", cmd: &keysCmd{}})
}

type keysCmd struct {
	Generate keysGenerateCmd `cmd:"" help:"Write an ed25519 private key to FILE (mode 0600) and its public key to FILE.pub. Sign bundles with the private key (palisade bundle sign --key FILE); list the public key file under bundles.trusted_keys in each gateway's config."`
}

type keysGenerateCmd struct {
	Out string `short:"o" default:"palisade-bundle.key" help:"Private key file (the public key goes to FILE.pub)." placeholder:"FILE"`
}

func (k *keysGenerateCmd) Run(env *cliEnv) error {
	pub, priv, err := bundle.GenerateKey()
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade keys:", err)
		return exitCode(exitFail)
	}
	pubPath, err := bundle.WriteKeyPair(k.Out, priv)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade keys:", err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "key id %s\nprivate key %s (keep it secret)\npublic key  %s\n%s\n", bundle.KeyID(pub), k.Out, pubPath, bundle.EncodePublicKey(pub))
	return nil
}
