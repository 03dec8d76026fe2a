package bus

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Roles: each is one NATS identity with its own permissions (see permissions). An
// agent process holds none of them and cannot connect to the embedded server.
const (
	// RoleGateway publishes audit, holds calls, signs audit events and its own
	// timeout decisions. It cannot create, update, purge or delete any stream or bucket,
	// delete messages, register audit signers, or write bundles.
	RoleGateway = "gateway"
	// RoleAdmin is the operator's CLI (bundle push, doctor): every subject.
	RoleAdmin = "admin"
	// RoleReader reads the audit stream and the signers bucket (audit tail), nothing else.
	RoleReader = "reader"
	// RoleApprover lists held calls and writes signed decisions and grants.
	RoleApprover = "approver"
	// RoleSink reads the audit stream with durable consumers (future audit sinks).
	RoleSink = "sink"
)

// Roles lists every role, in the order keys are generated.
var Roles = []string{RoleGateway, RoleAdmin, RoleReader, RoleApprover, RoleSink}

// Names the permissions refer to. They repeat host/audit's and host/approval's
// defaults because bus imports nothing from host/.
const (
	DefaultAuditStream     = "PALISADE_AUDIT"
	DefaultAuditSubject    = "palisade.audit"
	DefaultApprovalsBucket = "PALISADE_APPROVALS"
	DefaultSignersBucket   = "PALISADE_AUDIT_SIGNERS"
)

// AuthDirName is the directory under the data directory that holds one nkey seed per role.
const AuthDirName = "nats-auth"

// Errors of key handling.
var (
	// ErrKeyMode is returned for a key or creds file that other users may read or write.
	ErrKeyMode = errors.New("bus: key file readable by others (want mode 0600)")
	// ErrNoIdentity is returned when no key or creds file is found for a role.
	ErrNoIdentity = errors.New("bus: no nats identity")
)

// AuthDir is where Start keeps the role keys of the embedded server for dataDir.
func AuthDir(dataDir string) string { return filepath.Join(dataDir, AuthDirName) }

// KeyPath is the seed file of role under dataDir.
func KeyPath(dataDir, role string) string { return filepath.Join(AuthDir(dataDir), role+".nk") }

// Identity is one role's credentials: an nkey (from DATA_DIR/nats-auth/<role>.nk) or a NATS
// creds file (JWT plus nkey seed, for external servers). Its key also signs: audit events
// (gateway) and decisions on held calls (approver).
type Identity struct {
	Role  string
	Creds string // creds file; "" = nkey authentication
	kp    nkeys.KeyPair
	pub   string
	priv  ed25519.PrivateKey // expanded once: nkeys re-derives it from the seed on every Sign
}

// PublicKey is the identity's nkey public key ("U...").
func (id *Identity) PublicKey() string { return id.pub }

// Sign signs data with the identity's ed25519 key.
func (id *Identity) Sign(data []byte) ([]byte, error) { return ed25519.Sign(id.priv, data), nil }

// Options are the nats.go options that authenticate as this identity, plus an inbox prefix of
// its own (_INBOX_<role>), so that permissions can keep each role's replies to itself.
func (id *Identity) Options() []nats.Option {
	opts := []nats.Option{nats.CustomInboxPrefix(InboxPrefix(id.Role))}
	if id.Creds != "" {
		return append(opts, nats.UserCredentials(id.Creds))
	}
	return append(opts, nats.Nkey(id.pub, id.Sign))
}

// InboxPrefix is the reply-subject prefix role's connections use.
func InboxPrefix(role string) string {
	if role == "" {
		return nats.InboxPrefix[:len(nats.InboxPrefix)-1]
	}
	return "_INBOX_" + role
}

// Verify reports whether sig is a valid ed25519 signature of data by the nkey public key pub.
func Verify(pub string, data, sig []byte) bool {
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return false
	}
	return kp.Verify(data, sig) == nil
}

// LoadIdentity finds role's credentials: creds when set (a NATS creds file, JWT and seed, or a
// bare nkey seed file), else the seed
// file DATA_DIR/nats-auth/<role>.nk. A file any other user can read or write is refused with
// ErrKeyMode; no file at all is ErrNoIdentity.
func LoadIdentity(dataDir, role, creds string) (*Identity, error) {
	if creds != "" {
		return loadCreds(role, creds)
	}
	if dataDir == "" {
		return nil, fmt.Errorf("%w: role %s: no data dir and no creds file", ErrNoIdentity, role)
	}
	return loadSeed(role, KeyPath(dataDir, role))
}

func checkMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNoIdentity, path)
		}
		return fmt.Errorf("bus: key %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o", ErrKeyMode, path, fi.Mode().Perm())
	}
	return nil
}

func loadSeed(role, path string) (*Identity, error) {
	if err := checkMode(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bus: key %s: %w", path, err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
	if err != nil {
		return nil, fmt.Errorf("bus: key %s: %w", path, err)
	}
	return newIdentity(role, "", kp)
}

func loadCreds(role, path string) (*Identity, error) {
	if err := checkMode(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bus: creds %s: %w", path, err)
	}
	kp, err := jwt.ParseDecoratedNKey(b)
	if err != nil {
		return nil, fmt.Errorf("bus: creds %s: %w", path, err)
	}
	if tok, err := jwt.ParseDecoratedJWT(b); err != nil || strings.Count(strings.TrimSpace(tok), ".") != 2 {
		// A bare nkey seed file: authenticate with the nkey itself.
		return newIdentity(role, "", kp)
	}
	return newIdentity(role, path, kp)
}

func newIdentity(role, creds string, kp nkeys.KeyPair) (*Identity, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("bus: role %s: %w", role, err)
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("bus: role %s: %s is not a user nkey", role, pub)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, fmt.Errorf("bus: role %s: %w", role, err)
	}
	_, raw, err := nkeys.DecodeSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("bus: role %s: %w", role, err)
	}
	return &Identity{Role: role, Creds: creds, kp: kp, pub: pub, priv: ed25519.NewKeyFromSeed(raw)}, nil
}

// EnsureKeys loads the seed of every role from DATA_DIR/nats-auth, generating those missing
// (directory 0700, files 0600, written atomically). A file with a looser mode is refused.
func EnsureKeys(dataDir string) (map[string]*Identity, error) {
	dir := AuthDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bus: auth dir %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: directory %s has mode %04o", ErrKeyMode, dir, fi.Mode().Perm())
	}
	out := map[string]*Identity{}
	for _, role := range Roles {
		path := KeyPath(dataDir, role)
		id, err := loadSeed(role, path)
		if errors.Is(err, ErrNoIdentity) {
			id, err = generate(role, path)
		}
		if err != nil {
			return nil, err
		}
		out[role] = id
	}
	return out, nil
}

func generate(role, path string) (*Identity, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("bus: generate %s key: %w", role, err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+role+".nk-*")
	if err != nil {
		return nil, fmt.Errorf("bus: write %s key: %w", role, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(seed, '\n'))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// Link, not rename: a concurrent first start keeps whichever key landed first.
			err = os.Link(tmp.Name(), path)
			if errors.Is(err, fs.ErrExist) {
				return loadSeed(role, path)
			}
		}
	}
	if err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("bus: write %s key %s: %w", role, path, err)
	}
	return newIdentity(role, "", kp)
}

// Names are the streams and buckets the permissions name; zero fields take the defaults.
type Names struct {
	AuditStream     string // "" = PALISADE_AUDIT
	AuditSubject    string // "" = palisade.audit (the stream binds AuditSubject.>)
	ApprovalsBucket string // "" = PALISADE_APPROVALS
	SignersBucket   string // "" = PALISADE_AUDIT_SIGNERS
}

func (n Names) withDefaults() Names {
	if n.AuditStream == "" {
		n.AuditStream = DefaultAuditStream
	}
	if n.AuditSubject == "" {
		n.AuditSubject = DefaultAuditSubject
	}
	if n.ApprovalsBucket == "" {
		n.ApprovalsBucket = DefaultApprovalsBucket
	}
	if n.SignersBucket == "" {
		n.SignersBucket = DefaultSignersBucket
	}
	return n
}

// readStream are the JetStream API subjects that read stream s with ordered or durable
// consumers and direct gets.
func readStream(s string) []string {
	return []string{
		"$JS.API.INFO",
		"$JS.API.STREAM.INFO." + s,
		"$JS.API.STREAM.MSG.GET." + s,
		"$JS.API.DIRECT.GET." + s, "$JS.API.DIRECT.GET." + s + ".>",
		"$JS.API.CONSUMER.CREATE." + s, "$JS.API.CONSUMER.CREATE." + s + ".>",
		"$JS.API.CONSUMER.INFO." + s + ".>",
		"$JS.API.CONSUMER.DELETE." + s + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + s + ".>",
		"$JS.FC." + s + ".>",
	}
}

// Permissions returns what role may publish and subscribe to. Every role but admin receives
// replies only on its own inbox prefix (Identity.Options sets it), so that no role reads
// another's JetStream deliveries (held calls reach the gateway that way).
//
// # Notes
//
// Deny wins over allow in NATS. The audit stream's own config (deny_delete, deny_purge) stops
// purges and deletes for every identity, admin included. The gateway's permissions deny every
// stream management API subject (create, update, delete, purge, message delete, snapshot,
// restore) and writes to the signers bucket: the admin identity creates the streams and
// buckets and registers the gateway's signer key before the gateway connects.
func Permissions(role string, n Names) (*server.Permissions, error) {
	n = n.withDefaults()
	inbox := InboxPrefix(role) + ".>"
	audit, appr, signers := n.AuditStream, "KV_"+n.ApprovalsBucket, "KV_"+n.SignersBucket
	switch role {
	case RoleAdmin:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}, nil
	case RoleGateway:
		return &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{">"},
				Deny: []string{
					// Streams, KV and object buckets are created and configured by the admin
					// identity (the gateway's bootstrap for its embedded server): the gateway
					// only publishes and consumes, and erases nothing.
					"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
					"$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>",
					"$JS.API.STREAM.SNAPSHOT.>", "$JS.API.STREAM.RESTORE.>",
					"$JS.API.STREAM.PEER.REMOVE.>", "$JS.API.STREAM.LEADER.STEPDOWN.>",
					"$KV." + n.SignersBucket + ".>", // audit signers are registered by admin
					"$O.>",                          // bundles are published by the admin identity only
				},
			},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}, Deny: othersInboxes(role)},
		}, nil
	case RoleReader, RoleSink:
		pub := append(readStream(audit), readStream(signers)...)
		if role == RoleSink {
			pub = append(pub, "$JS.API.CONSUMER.DURABLE.CREATE."+audit+".>", "$JS.ACK."+audit+".>")
		}
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: []string{inbox, n.AuditSubject + ".>"}},
		}, nil
	case RoleApprover:
		pub := append(readStream(appr),
			"$KV."+n.ApprovalsBucket+".decision.>", "$KV."+n.ApprovalsBucket+".grant.>")
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: []string{inbox}},
		}, nil
	}
	return nil, fmt.Errorf("bus: unknown role %q", role)
}

// othersInboxes are the inbox prefixes of every role but role.
func othersInboxes(role string) []string {
	var out []string
	for _, r := range Roles {
		if r != role {
			out = append(out, InboxPrefix(r)+".>")
		}
	}
	return out
}

// NkeyUsers are the users the embedded server admits: the key of each role in ids, with that
// role's Permissions. A test cluster (testenv.StartCluster) gives each of its servers the same
// users, so that a cluster enforces what the embedded server does.
func NkeyUsers(ids map[string]*Identity, n Names) ([]*server.NkeyUser, error) {
	var users []*server.NkeyUser
	for _, role := range Roles {
		id := ids[role]
		if id == nil {
			continue
		}
		p, err := Permissions(role, n)
		if err != nil {
			return nil, err
		}
		users = append(users, &server.NkeyUser{Nkey: id.pub, Permissions: p})
	}
	return users, nil
}

// Dial connects to url as id (nil = without credentials), options after id's. A server that
// requires no authentication refuses an nkey handshake (nats.ErrNkeysNotSupported): Dial then
// connects without credentials, which such a server grants anyone anyway.
func Dial(url string, id *Identity, opts ...nats.Option) (*nats.Conn, error) {
	if id == nil {
		return nats.Connect(url, opts...)
	}
	nc, err := nats.Connect(url, append(id.Options(), opts...)...)
	if errors.Is(err, nats.ErrNkeysNotSupported) {
		return nats.Connect(url, append([]nats.Option{nats.CustomInboxPrefix(InboxPrefix(id.Role))}, opts...)...)
	}
	return nc, err
}
