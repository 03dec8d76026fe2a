package enginesock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"
)

// DefaultPath is where an installed engine listens (palisade install, deploy/palisade.service).
const DefaultPath = "/run/palisade/engine.sock"

// Peer is the process at the other end of a socket connection.
type Peer struct {
	UID int
	PID int
}

// User is the peer's user name ("uid N" when the system has no name for it).
func (p Peer) User() string {
	if u, err := user.LookupId(strconv.Itoa(p.UID)); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(p.UID)
}

// Home is the system's home folder for the peer's user ("" when it has none).
func (p Peer) Home() string {
	if u, err := user.LookupId(strconv.Itoa(p.UID)); err == nil {
		return u.HomeDir
	}
	return ""
}

// Info is what Dial checked about the engine.
type Info struct {
	// UID is the engine's user: the owner of the socket's folder and of the listening process.
	UID int
	// PID is the listening process.
	PID int
	// SharedUser is true when the engine runs as the caller's own user: the caller could have
	// bound the socket itself, so the answer is only as trustworthy as that user.
	SharedUser bool
}

// ErrUntrusted wraps every reason a socket is not the engine's.
var ErrUntrusted = errors.New("enginesock: not the engine's socket")

// CheckDir checks that dir is a real folder (not a link) that only its owner can create files
// in, and returns the owner's uid.
func CheckDir(dir string) (int, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return 0, err
	}
	uid, ok := owner(fi)
	if !fi.IsDir() || !ok {
		return 0, fmt.Errorf("%w: %s is not a folder", ErrUntrusted, dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return 0, fmt.Errorf("%w: %s is writable by group or others (mode %04o): anyone could bind the engine's socket there", ErrUntrusted, dir, fi.Mode().Perm())
	}
	return uid, nil
}

// Listen binds the engine's socket at path: its folder must pass CheckDir and belong to this
// process's user (or root); a stale socket file (nobody answers) is replaced, a live one is
// refused. The socket is 0666: any local user may ask for a decision; the folder is what keeps
// others from binding it.
func Listen(path string) (net.Listener, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("engine socket %q: not an absolute path", path)
	}
	dir := filepath.Dir(path)
	uid, err := CheckDir(dir)
	if err != nil {
		return nil, fmt.Errorf("engine socket: %w", err)
	}
	if me := os.Geteuid(); uid != me && uid != 0 {
		return nil, fmt.Errorf("engine socket: %s belongs to uid %d, not to this engine's user (%d) or root", dir, uid, me)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("engine socket: %s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("engine socket: another engine answers on %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("engine socket: remove stale %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("engine socket: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("engine socket: %w", err)
	}
	return ln, nil
}

type peerKey struct{}

// ConnContext is an http.Server ConnContext that puts the connection's peer (SO_PEERCRED) in
// every request's context; PeerFrom reads it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if uc, ok := c.(*net.UnixConn); ok {
		if p, err := PeerOf(uc); err == nil {
			return context.WithValue(ctx, peerKey{}, p)
		}
	}
	return ctx
}

// PeerFrom returns the peer ConnContext found for the request's connection.
func PeerFrom(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}

// Dial connects to the engine at path and checks that it is the engine: the folder passes
// CheckDir, the socket file belongs to the folder's owner, and the listening process runs as
// that user. A failed check wraps ErrUntrusted.
func Dial(ctx context.Context, path string) (net.Conn, Info, error) {
	dir := filepath.Dir(path)
	uid, err := CheckDir(dir)
	if err != nil {
		return nil, Info{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, Info{}, err
	}
	if sock, ok := owner(fi); fi.Mode().Type() != os.ModeSocket || !ok || sock != uid {
		return nil, Info{}, fmt.Errorf("%w: %s is not a socket owned by %s's owner (uid %d)", ErrUntrusted, path, dir, uid)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, Info{}, err
	}
	p, err := PeerOf(c.(*net.UnixConn))
	if err != nil {
		c.Close()
		return nil, Info{}, err
	}
	if p.UID != uid {
		c.Close()
		return nil, Info{}, fmt.Errorf("%w: the process answering on %s runs as uid %d, not as the engine's user (uid %d)", ErrUntrusted, path, p.UID, uid)
	}
	return c, Info{UID: uid, PID: p.PID, SharedUser: uid == os.Geteuid()}, nil
}

// Client is an HTTP client whose every connection is Dial(path), checked; base URL
// "http://engine". checked, when set, is called with what each Dial found (the first call
// tells the caller whether the engine shares its user).
func Client(path string, timeout time.Duration, checked func(Info)) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				c, info, err := Dial(ctx, path)
				if err == nil && checked != nil {
					checked(info)
				}
				return c, err
			},
			DisableKeepAlives: true,
		},
	}
}
