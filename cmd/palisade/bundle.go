package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "bundle", summary: "policy bundles: pin, build, sign, verify, push, ls, activate, rollback, upload", run: runBundle})
}

const bundleUsage = `usage: palisade bundle <subcommand>

  pin DIR                          fill each stage's sha256 in DIR/bundle.yaml from its plugin file
  build DIR -o FILE [--key KEY]    check pins, (sign with KEY,) pack DIR into FILE (.tar.gz)
  sign DIR|FILE --key KEY          write signature.json (into the folder, or into the archive)
  verify DIR|FILE --trusted-key K  check signature and pins (K: public key file or text; repeatable)
                  [--allow-unsigned]
  push DIR|FILE --nats-url URL     publish to the fleet's Object Store bucket; every gateway
                  [--bucket B] [--object O]   following nats://B/O verifies and activates it;
                  [--creds FILE] [--rollback] one whose manifest sequence is below a gateway's
                                   active bundle is refused unless pushed with --rollback
                                   (connects as the admin identity: DATA_DIR/nats-auth/admin.nk)
  ls [--json]                      kept bundles of a gateway (admin API)
  activate VERSION                 activate a kept bundle by version or digest (admin API)
  rollback                         go back to the previously active bundle (admin API)
  upload FILE                      upload an archive to a gateway and activate it (admin API)

Admin API flags: --url (env PALISADE_ADMIN_URL, default http://127.0.0.1:8420), --token (env
PALISADE_ADMIN_TOKEN; default: read DATA_DIR/admin.token), --data-dir (env PALISADE_DATA_DIR).`

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type bundleFlags struct {
	out, key, natsURL, bucket, object string
	url, token, dataDir, creds        string
	trusted                           listFlag
	allowUnsigned, asJSON, rollback   bool
}

// parseMixed parses flags that may come before or after positional arguments.
func parseMixed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runBundle(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, bundleUsage)
		return exitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("bundle "+sub, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var f bundleFlags
	fs.StringVar(&f.out, "o", "", "output archive (build; sign of an archive: default in place)")
	fs.StringVar(&f.key, "key", envOr(env, "PALISADE_BUNDLE_KEY", ""), "private key file (env PALISADE_BUNDLE_KEY)")
	fs.Var(&f.trusted, "trusted-key", "trusted public key file or text (repeatable)")
	fs.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "verify: accept a bundle without signature.json")
	fs.StringVar(&f.natsURL, "nats-url", envOr(env, "PALISADE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server (env PALISADE_NATS_URL)")
	fs.StringVar(&f.bucket, "bucket", bundle.DefaultBucket, "Object Store bucket")
	fs.StringVar(&f.object, "object", bundle.DefaultObject, "object name gateways follow")
	fs.StringVar(&f.url, "url", envOr(env, "PALISADE_ADMIN_URL", "http://127.0.0.1:8420"), "gateway base URL (env PALISADE_ADMIN_URL)")
	fs.StringVar(&f.token, "token", envOr(env, "PALISADE_ADMIN_TOKEN", ""), "admin bearer token (env PALISADE_ADMIN_TOKEN)")
	fs.StringVar(&f.dataDir, "data-dir", envOr(env, "PALISADE_DATA_DIR", ".palisade"), "gateway data dir holding admin.token")
	fs.BoolVar(&f.asJSON, "json", false, "ls: print JSON")
	fs.BoolVar(&f.rollback, "rollback", false, "push: an explicit rollback; gateways accept it even when its sequence is below their active bundle's")
	fs.StringVar(&f.creds, "creds", envOr(env, "PALISADE_NATS_CREDS", ""), "push: admin creds or nkey seed file (env PALISADE_NATS_CREDS; default DATA_DIR/nats-auth/admin.nk)")
	pos, err := parseMixed(fs, args[1:])
	if err != nil {
		return exitUsage
	}
	want := map[string]int{"pin": 1, "build": 1, "sign": 1, "verify": 1, "push": 1, "ls": 0, "activate": 1, "rollback": 0, "upload": 1}
	n, ok := want[sub]
	if !ok || len(pos) != n {
		if !ok {
			fmt.Fprintf(env.Stderr, "palisade bundle: unknown subcommand %q\n\n", sub)
		}
		fmt.Fprintln(env.Stderr, bundleUsage)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "palisade bundle %s: %v\n", sub, err)
		return exitFail
	}
	switch sub {
	case "pin":
		changed, err := bundle.Pin(pos[0])
		if err != nil {
			return fail(err)
		}
		if _, err := bundle.LoadManifest(pos[0]); err != nil {
			return fail(err)
		}
		fmt.Fprintf(env.Stdout, "pinned %d stage(s) in %s\n", changed, pos[0])
	case "build":
		if f.out == "" {
			fmt.Fprintln(env.Stderr, "palisade bundle build: -o FILE is required")
			return exitUsage
		}
		m, err := bundle.CheckPins(pos[0])
		if err != nil {
			return fail(err)
		}
		if f.key != "" {
			if _, err := signDir(pos[0], f.key); err != nil {
				return fail(err)
			}
		}
		if err := bundle.PackFile(pos[0], f.out); err != nil {
			return fail(err)
		}
		d, _ := bundle.Digest(pos[0])
		fmt.Fprintf(env.Stdout, "built %s: %s %s sha256:%s\n", f.out, m.Name, m.Version, d)
	case "sign":
		if f.key == "" {
			fmt.Fprintln(env.Stderr, "palisade bundle sign: --key FILE is required")
			return exitUsage
		}
		var sig *bundle.Signature
		err := withDir(pos[0], f.out, true, func(dir string) error {
			if _, err := bundle.CheckPins(dir); err != nil {
				return err
			}
			var err error
			sig, err = signDir(dir, f.key)
			return err
		})
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(env.Stdout, "signed %s %s %s with key %s\n", sig.Name, sig.Version, sig.Digest, sig.KeyID)
	case "verify":
		keys, err := bundle.LoadKeys(f.trusted)
		if err != nil {
			return fail(err)
		}
		err = withDir(pos[0], "", false, func(dir string) error {
			sig, d, verr := bundle.Verify(dir, keys)
			if verr != nil && !(errors.Is(verr, bundle.ErrUnsigned) && f.allowUnsigned) {
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
			return fail(err)
		}
	case "push":
		// Only the admin identity may write the bundles bucket on the embedded server.
		id, err := bus.LoadIdentity(f.dataDir, bus.RoleAdmin, f.creds)
		if errors.Is(err, bus.ErrNoIdentity) && f.creds == "" {
			id, err = nil, nil
		}
		if err != nil {
			return fail(err)
		}
		nc, err := bus.Dial(f.natsURL, id, nats.Name("palisade bundle push"), nats.Timeout(10*time.Second))
		if err != nil {
			return fail(err)
		}
		defer nc.Close()
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		push := bundle.Push
		if f.rollback {
			push = bundle.PushRollback
		}
		info, e, err := push(pctx, nc, f.bucket, f.object, pos[0])
		if err != nil {
			return fail(err)
		}
		signer := "unsigned"
		if e.KeyID != "" {
			signer = "signed by " + e.KeyID
		}
		fmt.Fprintf(env.Stdout, "pushed %s %s sha256:%s (%s) to %s/%s, %d bytes\n", e.Name, e.Version, e.Digest, signer, info.Bucket, info.Name, info.Size)
	case "ls":
		var l admin.BundleList
		if err := adminCall(ctx, env, f, http.MethodGet, "/bundles", nil, "", &l); err != nil {
			return fail(err)
		}
		if f.asJSON {
			b, _ := json.MarshalIndent(l, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return exitOK
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
		tw.Flush()
	case "activate", "rollback", "upload":
		var res admin.BundleResult
		var err error
		switch sub {
		case "activate":
			body, _ := json.Marshal(admin.ActivateRequest{Version: pos[0]})
			err = adminCall(ctx, env, f, http.MethodPost, "/bundles/activate", body, "application/json", &res)
		case "rollback":
			err = adminCall(ctx, env, f, http.MethodPost, "/bundles/rollback", nil, "", &res)
		case "upload":
			body, rerr := os.ReadFile(pos[0])
			if rerr != nil {
				return fail(rerr)
			}
			err = adminCall(ctx, env, f, http.MethodPost, "/bundles", body, "application/gzip", &res)
		}
		if err != nil {
			return fail(err)
		}
		verb := "active"
		if !res.Changed {
			verb = "already active"
		}
		fmt.Fprintf(env.Stdout, "%s: %s %s sha256:%s\n", verb, res.Bundle.Name, res.Bundle.Version, res.Bundle.Digest)
	}
	return exitOK
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

// adminCall calls the gateway's admin API and decodes the JSON answer into out.
func adminCall(ctx context.Context, env *cliEnv, f bundleFlags, method, path string, body []byte, ctype string, out any) error {
	tok := f.token
	if tok == "" {
		b, err := os.ReadFile(filepath.Join(f.dataDir, admin.TokenFile))
		if err != nil {
			return fmt.Errorf("no admin token: pass --token or PALISADE_ADMIN_TOKEN (%w)", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(f.url, "/")+admin.DefaultPrefix+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		var be admin.BundleError
		if json.Unmarshal(b, &be) == nil && be.Error != "" {
			if be.Reason != "" {
				return fmt.Errorf("HTTP %d: %s: %s", resp.StatusCode, be.Reason, be.Error)
			}
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, be.Error)
		}
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}
