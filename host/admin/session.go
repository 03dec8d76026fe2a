package admin

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// sessionStore holds the dashboard's signed-in people, whichever way they signed in (the
// identity provider, oidc.go; a passkey, passkeys.go): a random id in an HttpOnly,
// SameSite=Strict cookie, kept here by its hash, in memory only (a restart signs everyone out).
type sessionStore struct {
	prefix string // the cookie's path
	secure bool   // Secure cookie (false only on loopback http)
	ttl    time.Duration

	mu  sync.Mutex
	m   map[[sha256.Size]byte]*session // by the id's hash
	now func() time.Time
}

type session struct {
	id      Identity
	expires time.Time
}

func newSessionStore(prefix string, secure bool, ttl time.Duration) *sessionStore {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &sessionStore{prefix: prefix, secure: secure, ttl: ttl, m: map[[sha256.Size]byte]*session{}, now: time.Now}
}

// start signs id in: a new session and its cookie on c's response.
func (st *sessionStore) start(c echo.Context, id Identity) {
	sid := randomHex(32)
	st.mu.Lock()
	now := st.now()
	for k, se := range st.m {
		if now.After(se.expires) {
			delete(st.m, k)
		}
	}
	st.m[sha256.Sum256([]byte(sid))] = &session{id: id, expires: now.Add(st.ttl)}
	st.mu.Unlock()
	c.SetCookie(&http.Cookie{Name: SessionCookie, Value: sid, Path: st.prefix, MaxAge: int(st.ttl.Seconds()),
		HttpOnly: true, Secure: st.secure, SameSite: http.SameSiteStrictMode})
}

// lookup returns the session of the request's cookie.
func (st *sessionStore) lookup(r *http.Request) (Identity, bool) {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return Identity{}, false
	}
	h := sha256.Sum256([]byte(ck.Value))
	st.mu.Lock()
	defer st.mu.Unlock()
	se, ok := st.m[h]
	if !ok {
		return Identity{}, false
	}
	if st.now().After(se.expires) {
		delete(st.m, h)
		return Identity{}, false
	}
	return se.id, true
}

// endWhere ends every session whose identity matches (a passkey removed signs its holder out).
func (st *sessionStore) endWhere(match func(Identity) bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, se := range st.m {
		if match(se.id) {
			delete(st.m, k)
		}
	}
}

// logout is POST {prefix}/logout: the session ends here and the cookie is cleared.
func (st *sessionStore) logout(c echo.Context) error {
	if ck, err := c.Cookie(SessionCookie); err == nil {
		st.mu.Lock()
		delete(st.m, sha256.Sum256([]byte(ck.Value)))
		st.mu.Unlock()
	}
	c.SetCookie(&http.Cookie{Name: SessionCookie, Path: st.prefix, MaxAge: -1, HttpOnly: true, Secure: st.secure, SameSite: http.SameSiteStrictMode})
	return c.NoContent(http.StatusNoContent)
}
