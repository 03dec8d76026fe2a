package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestLoginCode: a one-time code is traded for the admin token once, within its time; a used,
// expired or made-up code is refused, and the authenticated routes still need the token.
func TestLoginCode(t *testing.T) {
	e := echo.New()
	s, err := New(Options{Echo: e, Token: "s3cret-admin-token"})
	if err != nil {
		t.Fatal(err)
	}
	s.Group().GET("/ping", func(c echo.Context) error { return c.String(http.StatusOK, "pong") })
	post := func(code string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, DefaultPrefix+"/login", strings.NewReader(`{"code":"`+code+`"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	code := s.LoginCode()
	if status, body := post(code); status != http.StatusOK || !strings.Contains(body, "s3cret-admin-token") {
		t.Fatalf("first use: %d %s", status, body)
	}
	if status, _ := post(code); status != http.StatusUnauthorized {
		t.Fatalf("second use: %d, want 401", status)
	}
	if status, _ := post("00112233445566778899aabbccddeeff"); status != http.StatusUnauthorized {
		t.Fatalf("made-up code: %d, want 401", status)
	}
	late := s.LoginCode()
	s.login.now = func() time.Time { return time.Now().Add(LoginTTL + time.Second) }
	if status, _ := post(late); status != http.StatusUnauthorized {
		t.Fatalf("expired code: %d, want 401", status)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, DefaultPrefix+"/ping", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("authenticated route without a token: %d", rec.Code)
	}
}
