package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/added060/palisade/host/bundle"
)

// installTrust is the trust policy `hook install` and `wrap` write into what they install for
// the bundle folder dir: each --trust-key as the key's own text (not a path another process
// could rewrite), after checking that dir verifies with them; or --allow-unsigned, only when
// asked. An unsigned bundle without --allow-unsigned, or a signed one without its key, is
// refused: without a trust policy the installed hook or proxy would load whatever the folder
// holds, and whoever can write the folder (the agent it guards) would set the policy.
func installTrust(dir string, trustKeys []string, allowUnsigned bool) (args []string, warn string, err error) {
	keys := bundle.KeySet{}
	for _, k := range trustKeys {
		ks, err := bundle.LoadKeys([]string{k})
		if err != nil {
			return nil, "", fmt.Errorf("--trust-key %s: %w", k, err)
		}
		for _, pub := range ks {
			keys.Add(pub)
			args = append(args, "--trust-key", bundle.EncodePublicKey(pub))
		}
	}
	if allowUnsigned {
		args = append(args, "--allow-unsigned")
	}
	if dir == "" {
		return args, "", nil
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if len(keys) == 0 && !allowUnsigned {
			return nil, "", fmt.Errorf("bundle %s not found, so its signature cannot be checked: pass --trust-key FILE.pub (the key it will be signed by) or --allow-unsigned", dir)
		}
		return args, fmt.Sprintf("bundle %s not found; the installed trust policy is not checked against it", dir), nil
	}
	sig, err := bundle.ReadSignature(dir)
	switch {
	case errors.Is(err, bundle.ErrUnsigned) && allowUnsigned:
		return args, fmt.Sprintf("bundle %s is unsigned and --allow-unsigned is set: whoever can write that folder sets the policy", dir), nil
	case errors.Is(err, bundle.ErrUnsigned):
		return nil, "", fmt.Errorf("bundle %s is unsigned: sign it (palisade keys generate; palisade bundle sign --key FILE %s) and pass --trust-key FILE.pub, or pass --allow-unsigned to let whoever can write the folder set the policy", dir, dir)
	case err != nil:
		return nil, "", err
	case len(keys) == 0:
		return nil, "", fmt.Errorf("bundle %s is signed by key %s: pass its public key with --trust-key FILE.pub (written into the installed command, so only bundles signed by it load)", dir, sig.KeyID)
	}
	if _, _, err := bundle.Verify(dir, keys); err != nil {
		return nil, "", fmt.Errorf("bundle %s: %w", dir, err)
	}
	return args, "", nil
}
