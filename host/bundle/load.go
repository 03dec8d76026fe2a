package bundle

import (
	"context"
	"fmt"
	"os"
)

// Stage copies the bundle at path (a folder, or a .tar.gz/.tgz archive) once into a fresh
// private folder (mode 0700) under parent ("" = the system temp dir) and returns it. Check and
// build the copy, never path again: what is verified is then what is built, however path
// changes meanwhile. The caller removes the copy.
func Stage(path, parent string) (string, error) {
	dst, err := os.MkdirTemp(parent, ".staging-")
	if err != nil {
		return "", fmt.Errorf("bundle: staging: %w", err)
	}
	if IsArchive(path) {
		err = UnpackFile(path, dst)
	} else {
		err = CopyDir(path, dst)
	}
	if err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	return dst, nil
}

// LoadOptions configure Load: the trust policy, the rollback protection and the build.
type LoadOptions struct {
	// Keys and AllowUnsigned are the trust policy (CheckTrust).
	Keys          KeySet
	AllowUnsigned bool
	// StagingDir is where the private copy goes ("" = the system temp dir).
	StagingDir string
	// Sequences, if set, refuses a bundle whose sequence is below the last one accepted under
	// its name (ErrOlder) and remembers the sequence of each bundle built.
	Sequences *Sequences
	Build     BuildOptions
}

// Load is how the one-process modes (host/gateway.Core.Build) activate a bundle, and the same
// steps as Manager.Activate: stage a private copy of path (Stage), check the trust policy over
// the copy (CheckTrust), build from the copy only (Build, whose reads are pinned to the digest
// it takes; a different digest than the one checked is refused), and refuse an older sequence
// than o.Sequences remembers (judged on the bundle.yaml that was built). The built bundle's Dir is the copy;
// it is removed when the bundle's chain closes, or at once on error. keyID is the signer's key
// id ("" when unsigned or not checked).
func Load(ctx context.Context, path string, o LoadOptions) (_ *Bundle, keyID string, err error) {
	staged, err := Stage(path, o.StagingDir)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(staged)
		}
	}()
	keyID, digest, err := CheckTrust(staged, o.Keys, o.AllowUnsigned)
	if err != nil {
		return nil, "", err
	}
	bo := o.Build
	bo.onClose = func() { os.RemoveAll(staged) }
	b, err := Build(ctx, staged, bo)
	if err != nil {
		return nil, "", err
	}
	if b.Digest != digest { // the private copy changed between the check and the build
		b.Chain.CloseWhenDrained(context.WithoutCancel(ctx))
		return nil, "", fmt.Errorf("%w: the staged copy changed while it was built (checked sha256:%s, built sha256:%s)", ErrDigestMismatch, digest, b.Digest)
	}
	if o.Sequences != nil {
		// b.Manifest is the bundle.yaml Build read, pinned to the checked digest: the sequence
		// judged is the signed one.
		if err := o.Sequences.Accept(b.Manifest, b.Digest); err != nil {
			b.Chain.CloseWhenDrained(context.WithoutCancel(ctx))
			return nil, "", err
		}
	}
	return b, keyID, nil
}
