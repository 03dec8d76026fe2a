package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// LoginTTL is how long a one-time login code is good for.
const LoginTTL = 10 * time.Minute

// loginCodes are one-time codes for the dashboard: the operator opens a link carrying one (the
// gateway prints it at start), the page trades it once for the admin token
// (POST {prefix}/login), and the code is gone. Only their hashes are kept.
type loginCodes struct {
	mu    sync.Mutex
	codes map[[sha256.Size]byte]time.Time // hash → expiry
	now   func() time.Time
}

// LoginCode returns a new one-time code for the dashboard, good once within LoginTTL. The
// link to print is {ui}/#login=CODE: the fragment never reaches a server log.
func (s *Server) LoginCode() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	code := hex.EncodeToString(b[:])
	s.login.mu.Lock()
	defer s.login.mu.Unlock()
	now := s.login.now()
	for h, exp := range s.login.codes {
		if now.After(exp) {
			delete(s.login.codes, h)
		}
	}
	s.login.codes[sha256.Sum256([]byte(code))] = now.Add(LoginTTL)
	return code
}

// redeem consumes code: true once, within its time.
func (l *loginCodes) redeem(code string) bool {
	h := sha256.Sum256([]byte(code))
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.codes[h]
	delete(l.codes, h)
	return ok && !l.now().After(exp)
}

// loginRoute is POST {prefix}/login {"code": "..."} → {"token": "..."}: unauthenticated by
// nature, and useful once per code.
func (s *Server) loginRoute(c echo.Context) error {
	var req struct {
		Code string `json:"code"`
	}
	if err := c.Bind(&req); err != nil || req.Code == "" {
		return Error(c, http.StatusBadRequest, `want {"code": "..."}`)
	}
	if !s.login.redeem(req.Code) {
		s.o.Logger.Warn("dashboard login code refused (unknown, used or expired)")
		return Error(c, http.StatusUnauthorized, "the login code is unknown, used or expired: ask the gateway for a new link (palisade serve prints one at start)")
	}
	s.o.Logger.Info("dashboard login by one-time code")
	return c.JSON(http.StatusOK, map[string]string{"token": string(s.token)})
}
