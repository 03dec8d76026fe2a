package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Source follows a place bundles come from and hands each new one to a Manager. Run blocks
// until ctx ends; failures to fetch are logged and retried, failures to activate are the
// Manager's (it keeps the current bundle and records bundle.rejected).
type Source interface {
	Run(ctx context.Context, m Target) error
	// String names the source in logs and events.
	String() string
}

// Target is what a Source hands bundles to: a Manager's active slot (*Manager) or its shadow
// slot (Manager.ShadowTarget).
type Target interface {
	Activate(ctx context.Context, path, source string) (Entry, bool, error)
	ActivateArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error)
	RollbackArchive(ctx context.Context, r io.Reader, source string) (Entry, bool, error)
	// Current is the bundle the slot holds.
	Current() (Entry, bool)
}

// Defaults for sources.
const (
	DefaultPollInterval = time.Second
	DefaultDebounce     = 500 * time.Millisecond
	DefaultHTTPInterval = 30 * time.Second
	DefaultResync       = 5 * time.Second
	DefaultBucket       = "PALISADE_BUNDLES"
	DefaultObject       = "current"
)

// DirSource watches a local bundle folder or archive by polling the names, sizes and
// modification times of its files (cheap: no file is read while nothing changes). A change
// activates once the content has been still for Debounce, so a half-copied bundle is never
// tried; the Manager computes the real digest and ignores a bundle that is already active. A
// content that was rejected is not retried until it changes.
type DirSource struct {
	Path     string
	Interval time.Duration // poll period; 0 = 1s
	Debounce time.Duration // quiet time before activating; 0 = 500ms
	Logger   *slog.Logger  // nil = discard
}

func (s *DirSource) String() string { return "dir:" + s.Path }

// Run polls until ctx ends. The content present when it starts is activated too (a no-op when
// it is already active).
func (s *DirSource) Run(ctx context.Context, m Target) error {
	iv, deb, log := orDur(s.Interval, DefaultPollInterval), orDur(s.Debounce, DefaultDebounce), orLog(s.Logger)
	tried, seen, since := "", "", time.Now()
	t := time.NewTicker(min(iv, deb))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fp, err := s.fingerprint()
		if err != nil {
			log.Debug("bundle source not readable", "source", s.String(), "err", err)
			seen = ""
			continue
		}
		if fp != seen {
			seen, since = fp, time.Now()
			continue
		}
		if fp == tried || time.Since(since) < deb {
			continue
		}
		tried = fp
		if _, _, err := m.Activate(ctx, s.Path, s.String()); err != nil && ctx.Err() == nil {
			log.Warn("bundle from source rejected", "source", s.String(), "err", err)
		}
	}
}

// fingerprint lists every file's path, size and modification time.
func (s *DirSource) fingerprint() (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(s.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\n", p, info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HTTPSource polls a URL serving a bundle archive, with If-None-Match so an unchanged bundle
// costs a 304. Without an ETag the body's sha256 stands in for it.
type HTTPSource struct {
	URL      string
	Interval time.Duration     // 0 = 30s
	Client   *http.Client      // nil = a client with a 60s timeout
	Header   map[string]string // added to each request (e.g. Authorization)
	Logger   *slog.Logger

	etag string
}

func (s *HTTPSource) String() string { return "http:" + s.URL }

// Run fetches at once, then every Interval, until ctx ends.
func (s *HTTPSource) Run(ctx context.Context, m Target) error {
	iv, log := orDur(s.Interval, DefaultHTTPInterval), orLog(s.Logger)
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		if _, err := s.Poll(ctx, m); err != nil && ctx.Err() == nil {
			log.Warn("bundle source", "source", s.String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Poll fetches once; it reports whether a new bundle was activated.
func (s *HTTPSource) Poll(ctx context.Context, m Target) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return false, fmt.Errorf("bundle source %s: %w", s.URL, err)
	}
	for k, v := range s.Header {
		req.Header.Set(k, v)
	}
	if s.etag != "" {
		req.Header.Set("If-None-Match", s.etag)
	}
	c := s.Client
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("bundle source: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return false, nil
	case http.StatusOK:
	default:
		return false, fmt.Errorf("bundle source %s: HTTP %s", s.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxArchiveBytes+1))
	if err != nil {
		return false, fmt.Errorf("bundle source %s: %w", s.URL, err)
	}
	tag := resp.Header.Get("ETag")
	if tag == "" {
		sum := sha256.Sum256(body)
		tag = "sha256:" + hex.EncodeToString(sum[:])
		if tag == s.etag {
			return false, nil
		}
	}
	// Remember the tag whatever the outcome: a rejected bundle is not retried until it changes.
	s.etag = tag
	_, changed, err := m.ActivateArchive(ctx, bytes.NewReader(body), s.String())
	return changed, err
}

// ObjectStoreSource follows one object (a bundle archive) in a NATS JetStream Object Store
// bucket: publish once with Push and every gateway watching swaps. It watches for puts and
// also re-reads the object's info every Resync, so a gateway that lost NATS catches up when the
// connection returns even if its watch did not survive.
type ObjectStoreSource struct {
	Conn   *nats.Conn
	Bucket string        // "" = PALISADE_BUNDLES
	Object string        // "" = current
	Resync time.Duration // 0 = 5s
	// FetchTimeout bounds each read from NATS (not the activation that follows); 0 = 30s.
	FetchTimeout time.Duration
	Logger       *slog.Logger

	tried     string                      // NUID of the last object handed to the manager
	afterInfo func(*jetstream.ObjectInfo) // tests: runs between the first look at the info and the read
}

func (s *ObjectStoreSource) String() string {
	return "nats:" + orStr(s.Bucket, DefaultBucket) + "/" + orStr(s.Object, DefaultObject)
}

// Run watches until ctx ends.
func (s *ObjectStoreSource) Run(ctx context.Context, m Target) error {
	log := orLog(s.Logger)
	resync := time.NewTicker(orDur(s.Resync, DefaultResync))
	defer resync.Stop()
	var (
		w       jetstream.ObjectWatcher
		updates <-chan *jetstream.ObjectInfo
	)
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		if w == nil && s.Conn.IsConnected() {
			obs, err := OpenBucket(ctx, s.Conn, s.Bucket)
			if err == nil {
				w, err = obs.Watch(ctx, jetstream.IgnoreDeletes())
			}
			if err != nil {
				log.Debug("bundle bucket watch", "source", s.String(), "err", err)
				w = nil
			} else {
				updates = w.Updates()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case info, ok := <-updates:
			if !ok {
				w, updates = nil, nil // the watch ended; set it up again
				continue
			}
			if info == nil || info.Name != orStr(s.Object, DefaultObject) {
				continue
			}
		case <-resync.C:
		}
		if _, err := s.Sync(ctx, m); err != nil && ctx.Err() == nil {
			log.Debug("bundle bucket sync", "source", s.String(), "err", err)
		}
	}
}

// Sync reads the object's info and activates it when it is new; it reports whether it did.
func (s *ObjectStoreSource) Sync(ctx context.Context, m Target) (bool, error) {
	body, info, err := s.fetch(ctx, m)
	if err != nil || body == nil {
		return false, err
	}
	s.tried = info.NUID
	activate := m.ActivateArchive
	if info.Metadata[MetaRollback] == "true" {
		activate = m.RollbackArchive // palisade bundle push --rollback (admin identity only)
	}
	_, changed, err := activate(ctx, bytes.NewReader(body), s.String())
	if err != nil && ctx.Err() != nil {
		s.tried = "" // interrupted, not rejected: try again
	}
	return changed, err
}

// fetch returns the object's bytes when it differs from what was tried and what is active,
// with the info of the very object those bytes are (not of one put before or after them).
//
// # Notes
//
// GetInfo alone is a cheap first look (no chunks read when nothing changed), but a put may land
// between it and the read: the info that decides (its NUID, its rollback mark) is the one Get
// returns with the body, and the body is checked against that info's size and digest.
func (s *ObjectStoreSource) fetch(ctx context.Context, m Target) ([]byte, *jetstream.ObjectInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, orDur(s.FetchTimeout, 30*time.Second))
	defer cancel()
	// The first look is two small requests: a request lost with a server that died while it
	// was in flight is given up after infoTimeout, not FetchTimeout, and the next resync asks
	// again (TestReplicatedBusFailover).
	ictx, icancel := context.WithTimeout(ctx, infoTimeout)
	defer icancel()
	obs, err := OpenBucket(ictx, s.Conn, s.Bucket)
	if err != nil {
		return nil, nil, err
	}
	info, err := obs.GetInfo(ictx, orStr(s.Object, DefaultObject))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bundle bucket %s: %w", s.String(), err)
	}
	if s.skip(m, info) {
		return nil, nil, nil
	}
	if s.afterInfo != nil {
		s.afterInfo(info)
	}
	rctx, rcancel := context.WithTimeout(ctx, readTimeout(info.Size))
	defer rcancel()
	res, err := obs.Get(rctx, info.Name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bundle bucket %s: get: %w", s.String(), err)
	}
	defer res.Close()
	body, err := io.ReadAll(io.LimitReader(res, MaxArchiveBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("bundle bucket %s: read: %w", s.String(), err)
	}
	// The info of the object read, which may be newer than the first look.
	got, err := res.Info()
	if err != nil {
		return nil, nil, fmt.Errorf("bundle bucket %s: info: %w", s.String(), err)
	}
	if err := checkObject(body, got); err != nil {
		return nil, nil, fmt.Errorf("bundle bucket %s: %w", s.String(), err)
	}
	if got.NUID != info.NUID && s.skip(m, got) {
		return nil, nil, nil
	}
	return body, got, nil
}

// infoTimeout bounds the first look at the object (opening the bucket, reading its info).
const infoTimeout = 5 * time.Second

// readTimeout bounds one read of an object of size bytes (within FetchTimeout): 5s plus a second
// per MiB. The chunks come through an ordered consumer; one lost with its stream's leader (a
// JetStream cluster failover) stalls the read until this deadline, and the next resync reads
// again with a fresh consumer instead of waiting out FetchTimeout (TestReplicatedBusFailover).
func readTimeout(size uint64) time.Duration {
	return 5*time.Second + time.Duration(size>>20)*time.Second
}

// skip reports whether the object info names what was last tried or what is active.
func (s *ObjectStoreSource) skip(m Target, info *jetstream.ObjectInfo) bool {
	if info.NUID == s.tried {
		return true
	}
	if cur, ok := m.Current(); ok && info.Metadata[MetaDigest] == cur.Digest {
		s.tried = info.NUID
		return true
	}
	return false
}

// checkObject verifies that body is the object info describes: its size and SHA-256 digest.
func checkObject(body []byte, info *jetstream.ObjectInfo) error {
	if uint64(len(body)) != info.Size {
		return fmt.Errorf("object %s (%s) is %d bytes, its info says %d", info.Name, info.NUID, len(body), info.Size)
	}
	sum := sha256.Sum256(body)
	if want := "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:]); info.Digest != want {
		return fmt.Errorf("object %s (%s) has digest %s, its info says %s", info.Name, info.NUID, want, info.Digest)
	}
	return nil
}

// Object metadata keys Push writes.
const (
	MetaName    = "palisade-bundle-name"
	MetaVersion = "palisade-bundle-version"
	MetaDigest  = "palisade-bundle-digest"
	// MetaRollback "true" marks an operator's explicit rollback: gateways accept the object
	// even when its sequence is below the active bundle's.
	MetaRollback = "palisade-bundle-rollback"
)

// BucketConfig is the bundle bucket's configuration ("" = PALISADE_BUNDLES) with replicas
// copies (0 = 1).
func BucketConfig(bucket string, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{Bucket: orStr(bucket, DefaultBucket), Description: "Palisade policy bundles",
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1)}
}

// OpenBucket opens the bundle bucket, creating it when it does not exist.
func OpenBucket(ctx context.Context, nc *nats.Conn, bucket string) (jetstream.ObjectStore, error) {
	bucket = orStr(bucket, DefaultBucket)
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bundle bucket: %w", err)
	}
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, BucketConfig(bucket, 0))
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bundle bucket %s: %w", bucket, err)
	}
	return obs, nil
}

// Push packs dir (or reads the archive at path) and puts it into the bucket as object ("" =
// current), with the bundle's name, version and digest as metadata. Every gateway following
// the object activates it (after verifying it against its own trusted keys).
func Push(ctx context.Context, nc *nats.Conn, bucket, object, path string) (*jetstream.ObjectInfo, Entry, error) {
	return push(ctx, nc, bucket, object, path, false)
}

// PushRollback is Push for an operator's explicit rollback: the object is marked so that
// gateways accept it even when its sequence is below their active bundle's.
func PushRollback(ctx context.Context, nc *nats.Conn, bucket, object, path string) (*jetstream.ObjectInfo, Entry, error) {
	return push(ctx, nc, bucket, object, path, true)
}

func push(ctx context.Context, nc *nats.Conn, bucket, object, path string, rollback bool) (*jetstream.ObjectInfo, Entry, error) {
	var buf bytes.Buffer
	dir := path
	if IsArchive(path) {
		tmp, err := os.MkdirTemp("", "palisade-push-")
		if err != nil {
			return nil, Entry{}, err
		}
		defer os.RemoveAll(tmp)
		if err := UnpackFile(path, tmp); err != nil {
			return nil, Entry{}, err
		}
		dir = tmp
	}
	if err := Pack(dir, &buf); err != nil {
		return nil, Entry{}, err
	}
	m, err := LoadManifest(dir)
	if err != nil {
		return nil, Entry{}, err
	}
	d, err := Digest(dir)
	if err != nil {
		return nil, Entry{}, err
	}
	e := Entry{Name: m.Name, Version: m.Version, Sequence: m.Sequence, Digest: d}
	if sig, err := ReadSignature(dir); err == nil {
		e.KeyID = sig.KeyID
	}
	obs, err := OpenBucket(ctx, nc, bucket)
	if err != nil {
		return nil, e, err
	}
	meta := map[string]string{MetaName: m.Name, MetaVersion: m.Version, MetaDigest: d}
	if rollback {
		meta[MetaRollback] = "true"
	}
	info, err := obs.Put(ctx, jetstream.ObjectMeta{
		Name:        orStr(object, DefaultObject),
		Description: m.Name + " " + m.Version,
		Metadata:    meta,
	}, &buf)
	if err != nil {
		return nil, e, fmt.Errorf("bundle push: %w", err)
	}
	return info, e, nil
}

// ParseSource turns the config's bundle string into a Source: "nats://BUCKET[/OBJECT]" (or
// "nats:" for the default bucket) follows an Object Store object over conn; "http(s)://..."
// polls a URL; anything else is a local folder or archive.
func ParseSource(spec string, conn *nats.Conn, log *slog.Logger) (Source, error) {
	switch {
	case strings.HasPrefix(spec, "nats:"):
		if conn == nil {
			return nil, fmt.Errorf("bundle source %q: no NATS connection", spec)
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(spec, "nats:"), "//")
		bucket, object, _ := strings.Cut(rest, "/")
		return &ObjectStoreSource{Conn: conn, Bucket: bucket, Object: object, Logger: log}, nil
	case strings.HasPrefix(spec, "http://"), strings.HasPrefix(spec, "https://"):
		return &HTTPSource{URL: spec, Logger: log}, nil
	case spec == "":
		return nil, errors.New("bundle source: empty")
	}
	return &DirSource{Path: spec, Logger: log}, nil
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orLog(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
