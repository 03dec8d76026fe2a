package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "bundle", summary: "policy bundles: pin, build, sign, verify, push, ls, activate, rollback, upload, shadow, promote-shadow", cmd: &bundleCmd{}})
}

// bundleCmd is `palisade bundle`. pin, build, sign and verify work on files; push publishes to
// the fleet's Object Store; ls, activate, rollback and upload call a gateway's admin API.
type bundleCmd struct {
	Pin      bundlePinCmd      `cmd:"" help:"Fill each stage's sha256 in DIR/bundle.yaml from its plugin file."`
	Build    bundleBuildCmd    `cmd:"" help:"Check pins, (sign with --key,) pack DIR into FILE (.tar.gz)."`
	Sign     bundleSignCmd     `cmd:"" help:"Write signature.json (into the folder, or into the archive)."`
	Verify   bundleVerifyCmd   `cmd:"" help:"Check signature and pins."`
	Push     bundlePushCmd     `cmd:"" help:"Publish to the fleet's Object Store bucket; every gateway following nats://BUCKET/OBJECT verifies and activates it. One whose manifest sequence is below a gateway's active bundle is refused unless pushed with --rollback. Connects as the admin identity (DATA_DIR/nats-auth/admin.nk)."`
	Ls       bundleLsCmd       `cmd:"" help:"Kept bundles of a gateway (admin API)."`
	Activate bundleActivateCmd `cmd:"" help:"Activate a kept bundle by version or digest (admin API)."`
	Rollback bundleRollbackCmd `cmd:"" help:"Go back to the previously active bundle (admin API)."`
	Upload   bundleUploadCmd   `cmd:"" help:"Upload an archive to a gateway and activate it (admin API)."`
	Shadow   bundleShadowCmd   `cmd:"" help:"Load a bundle (folder or archive) as a gateway's shadow: it judges copies of the calls the active bundle decides, off the hot path; 'none' clears it; no argument shows it (admin API)."`
	// PromoteShadow is promote-shadow.
	PromoteShadow bundlePromoteShadowCmd `cmd:"" name:"promote-shadow" help:"Make the shadow bundle the active one through the signed activation path (trust, sequence, bundle.activated) (admin API)."`
}

// keyFlag is the private signing key of build and sign.
type keyFlag struct {
	Key string `help:"Private key file." env:"PALISADE_BUNDLE_KEY" placeholder:"FILE"`
}

func bundleFail(env *cliEnv, sub string, err error) error {
	fmt.Fprintf(env.Stderr, "palisade bundle %s: %v\n", sub, err)
	return exitCode(exitFail)
}

type bundlePinCmd struct {
	Dir string `arg:"" help:"Bundle folder."`
}

func (c *bundlePinCmd) Run(env *cliEnv) error {
	changed, err := bundle.Pin(c.Dir)
	if err != nil {
		return bundleFail(env, "pin", err)
	}
	if _, err := bundle.LoadManifest(c.Dir); err != nil {
		return bundleFail(env, "pin", err)
	}
	fmt.Fprintf(env.Stdout, "pinned %d stage(s) in %s\n", changed, c.Dir)
	return nil
}

type bundleBuildCmd struct {
	keyFlag `embed:""`
	Dir     string `arg:"" help:"Bundle folder."`
	Out     string `short:"o" help:"Output archive (required)." placeholder:"FILE"`
}

func (c *bundleBuildCmd) Run(env *cliEnv) error {
	if c.Out == "" {
		fmt.Fprintln(env.Stderr, "palisade bundle build: -o FILE is required")
		return exitCode(exitUsage)
	}
	m, err := bundle.CheckPins(c.Dir)
	if err != nil {
		return bundleFail(env, "build", err)
	}
	if c.Key != "" {
		if _, err := signDir(c.Dir, c.Key); err != nil {
			return bundleFail(env, "build", err)
		}
	}
	if err := bundle.PackFile(c.Dir, c.Out); err != nil {
		return bundleFail(env, "build", err)
	}
	d, _ := bundle.Digest(c.Dir)
	fmt.Fprintf(env.Stdout, "built %s: %s %s sha256:%s\n", c.Out, m.Name, m.Version, d)
	return nil
}

type bundleSignCmd struct {
	keyFlag `embed:""`
	Path    string `arg:"" help:"Bundle folder or archive." placeholder:"DIR|FILE"`
	Out     string `short:"o" help:"Signing an archive: write the signed archive here (default in place)." placeholder:"FILE"`
}

func (c *bundleSignCmd) Run(env *cliEnv) error {
	if c.Key == "" {
		fmt.Fprintln(env.Stderr, "palisade bundle sign: --key FILE is required")
		return exitCode(exitUsage)
	}
	var sig *bundle.Signature
	err := withDir(c.Path, c.Out, true, func(dir string) error {
		if _, err := bundle.CheckPins(dir); err != nil {
			return err
		}
		var err error
		sig, err = signDir(dir, c.Key)
		return err
	})
	if err != nil {
		return bundleFail(env, "sign", err)
	}
	fmt.Fprintf(env.Stdout, "signed %s %s %s with key %s\n", sig.Name, sig.Version, sig.Digest, sig.KeyID)
	return nil
}

type bundleVerifyCmd struct {
	Path          string   `arg:"" help:"Bundle folder or archive." placeholder:"DIR|FILE"`
	TrustedKey    []string `help:"Trusted public key file or text (repeatable)." placeholder:"KEY" sep:"none"`
	AllowUnsigned bool     `help:"Accept a bundle without signature.json."`
}

func (c *bundleVerifyCmd) Run(env *cliEnv) error {
	keys, err := bundle.LoadKeys(c.TrustedKey)
	if err != nil {
		return bundleFail(env, "verify", err)
	}
	err = withDir(c.Path, "", false, func(dir string) error {
		sig, d, verr := bundle.Verify(dir, keys)
		if verr != nil && !(errors.Is(verr, bundle.ErrUnsigned) && c.AllowUnsigned) {
			return fmt.Errorf("%s: %w", bundle.RejectReason(verr), verr)
		}
		m, err := bundle.CheckPins(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", bundle.RejectReason(err), err)
		}
		who := "unsigned"
		if sig != nil && verr == nil {
			who = "signed by " + sig.KeyID
		}
		fmt.Fprintf(env.Stdout, "ok %s %s sha256:%s %s\n", m.Name, m.Version, d, who)
		return nil
	})
	if err != nil {
		return bundleFail(env, "verify", err)
	}
	return nil
}

type bundlePushCmd struct {
	Path     string `arg:"" help:"Bundle folder or archive." placeholder:"DIR|FILE"`
	NATSURL  string `name:"nats-url" default:"nats://127.0.0.1:4222" help:"NATS server." env:"PALISADE_NATS_URL" placeholder:"URL"`
	Bucket   string `default:"${bundle_bucket}" help:"Object Store bucket."`
	Object   string `default:"${bundle_object}" help:"Object name gateways follow."`
	Creds    string `help:"Admin creds or nkey seed file (default DATA_DIR/nats-auth/admin.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	DataDir  string `default:".palisade" help:"Gateway data dir holding nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Rollback bool   `help:"An explicit rollback: gateways accept it even when its sequence is below their active bundle's."`
}

func (c *bundlePushCmd) Run(ctx context.Context, env *cliEnv) error {
	// Only the admin identity may write the bundles bucket on the embedded server.
	id, err := bus.LoadIdentity(c.DataDir, bus.RoleAdmin, c.Creds)
	if errors.Is(err, bus.ErrNoIdentity) && c.Creds == "" {
		id, err = nil, nil
	}
	if err != nil {
		return bundleFail(env, "push", err)
	}
	nc, err := bus.Dial(c.NATSURL, id, nats.Name("palisade bundle push"), nats.Timeout(10*time.Second))
	if err != nil {
		return bundleFail(env, "push", err)
	}
	defer nc.Close()
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	push := bundle.Push
	if c.Rollback {
		push = bundle.PushRollback
	}
	info, e, err := push(pctx, nc, c.Bucket, c.Object, c.Path)
	if err != nil {
		return bundleFail(env, "push", err)
	}
	signer := "unsigned"
	if e.KeyID != "" {
		signer = "signed by " + e.KeyID
	}
	fmt.Fprintf(env.Stdout, "pushed %s %s sha256:%s (%s) to %s/%s, %d bytes\n", e.Name, e.Version, e.Digest, signer, info.Bucket, info.Name, info.Size)
	return nil
}

type bundleLsCmd struct {
	adminFlags `embed:""`
	JSON       bool `name:"json" help:"Print JSON."`
}

func (c *bundleLsCmd) Run(ctx context.Context, env *cliEnv) error {
	ac, err := c.client()
	if err != nil {
		return bundleFail(env, "ls", err)
	}
	var l admin.BundleList
	if err := ac.do(ctx, http.MethodGet, "/bundles", nil, "", &l); err != nil {
		return bundleFail(env, "ls", err)
	}
	if c.JSON {
		b, _ := json.MarshalIndent(l, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tNAME\tVERSION\tDIGEST\tKEY\tACTIVATED\tSOURCE")
	for i, e := range l.History {
		mark := ""
		if i == 0 && l.Active != nil && l.Active.Digest == e.Digest {
			mark = "*"
		}
		key := e.KeyID
		if key == "" {
			key = "unsigned"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t%s\t%s\t%s\n", mark, e.Name, e.Version, e.Digest, key, e.ActivatedAt.Format(time.RFC3339), e.Source)
	}
	return tw.Flush()
}

type bundleActivateCmd struct {
	adminFlags `embed:""`
	Version    string `arg:"" help:"Kept bundle's version or digest prefix."`
}

func (c *bundleActivateCmd) Run(ctx context.Context, env *cliEnv) error {
	return bundleAdmin(ctx, env, "activate", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
		return ac.doJSON(ctx, http.MethodPost, "/bundles/activate", admin.ActivateRequest{Version: c.Version}, res)
	})
}

type bundleRollbackCmd struct {
	adminFlags `embed:""`
}

func (c *bundleRollbackCmd) Run(ctx context.Context, env *cliEnv) error {
	return bundleAdmin(ctx, env, "rollback", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
		return ac.do(ctx, http.MethodPost, "/bundles/rollback", nil, "", res)
	})
}

type bundleUploadCmd struct {
	adminFlags `embed:""`
	File       string `arg:"" help:"Bundle archive (.tar.gz)."`
}

func (c *bundleUploadCmd) Run(ctx context.Context, env *cliEnv) error {
	body, err := os.ReadFile(c.File)
	if err != nil {
		return bundleFail(env, "upload", err)
	}
	return bundleAdmin(ctx, env, "upload", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
		return ac.do(ctx, http.MethodPost, "/bundles", body, "application/gzip", res)
	})
}

type bundleShadowCmd struct {
	adminFlags `embed:""`
	Path       string `arg:"" optional:"" help:"Bundle folder or archive to load as the shadow; 'none' clears the shadow; empty shows it." placeholder:"DIR|FILE|none"`
	JSON       bool   `name:"json" help:"Print JSON (showing the shadow)."`
}

func (c *bundleShadowCmd) Run(ctx context.Context, env *cliEnv) error {
	switch c.Path {
	case "":
		ac, err := c.client()
		if err != nil {
			return bundleFail(env, "shadow", err)
		}
		var st admin.ShadowStatus
		if err := ac.do(ctx, http.MethodGet, "/bundles/shadow", nil, "", &st); err != nil {
			return bundleFail(env, "shadow", err)
		}
		if c.JSON {
			b, _ := json.MarshalIndent(st, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return nil
		}
		if st.Shadow == nil {
			fmt.Fprintln(env.Stdout, "no shadow bundle")
			return nil
		}
		fmt.Fprintf(env.Stdout, "shadow: %s %s sha256:%s (judged %d, disagreed %d, dropped %d, queued %d)\n", st.Shadow.Name, st.Shadow.Version,
			st.Shadow.Digest, st.Stats.Judged, st.Stats.Disagreements, st.Stats.Dropped, st.Stats.Queued)
		return nil
	case "none":
		return bundleAdminVerb(ctx, env, "shadow", "shadow cleared", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
			return ac.do(ctx, http.MethodDelete, "/bundles/shadow", nil, "", res)
		})
	}
	body, err := packBody(c.Path)
	if err != nil {
		return bundleFail(env, "shadow", err)
	}
	return bundleAdminVerb(ctx, env, "shadow", "shadow", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
		return ac.do(ctx, http.MethodPut, "/bundles/shadow", body, "application/gzip", res)
	})
}

type bundlePromoteShadowCmd struct {
	adminFlags `embed:""`
}

func (c *bundlePromoteShadowCmd) Run(ctx context.Context, env *cliEnv) error {
	return bundleAdmin(ctx, env, "promote-shadow", &c.adminFlags, func(ac *adminClient, res *admin.BundleResult) error {
		return ac.do(ctx, http.MethodPost, "/bundles/shadow/promote", nil, "", res)
	})
}

// packBody returns the archive bytes of a bundle folder, or an archive's own bytes.
func packBody(path string) ([]byte, error) {
	if bundle.IsArchive(path) {
		return os.ReadFile(path)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(path, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bundleAdmin runs one activating admin call and prints the bundle it left active.
func bundleAdmin(ctx context.Context, env *cliEnv, sub string, f *adminFlags, call func(*adminClient, *admin.BundleResult) error) error {
	return bundleAdminVerb(ctx, env, sub, "active", f, call)
}

// bundleAdminVerb is bundleAdmin printing verb (active, shadow, ...) before the bundle.
func bundleAdminVerb(_ context.Context, env *cliEnv, sub, verb string, f *adminFlags, call func(*adminClient, *admin.BundleResult) error) error {
	ac, err := f.client()
	if err != nil {
		return bundleFail(env, sub, err)
	}
	var res admin.BundleResult
	if err := call(ac, &res); err != nil {
		return bundleFail(env, sub, err)
	}
	if !res.Changed {
		verb = "already " + verb
	}
	fmt.Fprintf(env.Stdout, "%s: %s %s sha256:%s\n", verb, res.Bundle.Name, res.Bundle.Version, res.Bundle.Digest)
	return nil
}

func signDir(dir, keyFile string) (*bundle.Signature, error) {
	k, err := bundle.ReadPrivateKey(keyFile)
	if err != nil {
		return nil, err
	}
	return bundle.Sign(dir, k)
}

// withDir runs fn on a folder, or on an archive unpacked to a temporary folder; with repack, the
// folder is packed back into out (default: the archive itself).
func withDir(path, out string, repack bool, fn func(dir string) error) error {
	if !bundle.IsArchive(path) {
		return fn(path)
	}
	tmp, err := os.MkdirTemp("", "palisade-bundle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "b")
	if err := bundle.UnpackFile(path, dir); err != nil {
		return err
	}
	if err := fn(dir); err != nil {
		return err
	}
	if !repack {
		return nil
	}
	if out == "" {
		out = path
	}
	return bundle.PackFile(dir, out)
}
