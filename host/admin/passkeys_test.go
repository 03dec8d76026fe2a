package admin

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/config"
)

// softKey is a software authenticator speaking WebAuthn's wire format: a P-256 key, "none"
// attestation, user presence and verification always given; the browser's side of a ceremony
// (clientDataJSON with the challenge and origin) included. Chromium's virtual authenticator
// does the same in tests/ui/passkey.test.js.
type softKey struct {
	priv   *ecdsa.PrivateKey
	id     []byte
	handle []byte // the user handle the relying party gave at registration
	rpID   string
	origin string
	count  uint32
}

func newSoftKey(t *testing.T, rpID, origin string) *softKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softKey{priv: priv, id: id, rpID: rpID, origin: origin}
}

var b64 = base64.RawURLEncoding

func (k *softKey) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	return b
}

func (k *softKey) authData(flags byte, attested []byte) []byte {
	h := sha256.Sum256([]byte(k.rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, k.count)
	return append(out, attested...)
}

// create answers navigator.credentials.create with the options the server sent.
func (k *softKey) create(t *testing.T, options json.RawMessage) []byte {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatal(err)
	}
	var err error
	if k.handle, err = b64.DecodeString(o.PublicKey.User.ID); err != nil {
		t.Fatal(err)
	}
	x, y := k.priv.X.FillBytes(make([]byte, 32)), k.priv.Y.FillBytes(make([]byte, 32))
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		t.Fatal(err)
	}
	att := make([]byte, 16) // AAGUID
	att = binary.BigEndian.AppendUint16(att, uint16(len(k.id)))
	att = append(append(att, k.id...), cose...)
	obj, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": k.authData(0x45, att)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(k.clientData("webauthn.create", o.PublicKey.Challenge)),
			"attestationObject": b64.EncodeToString(obj), "transports": []string{"internal"}},
		"clientExtensionResults": map[string]any{}})
	return b
}

// get answers navigator.credentials.get: a signature over the authenticator data and the
// client data's hash, the counter one higher.
func (k *softKey) get(t *testing.T, options json.RawMessage) []byte {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatal(err)
	}
	k.count++
	ad := k.authData(0x05, nil)
	cd := k.clientData("webauthn.get", o.PublicKey.Challenge)
	ch := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), ad...), ch[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(k.handle)},
		"clientExtensionResults": map[string]any{}})
	return b
}

type pkEnv struct {
	base, origin, data string
	srv                *Server
}

// startPasskeys serves an admin API with passkeys for origin http://localhost:PORT, and a route
// that needs the approver role and answers who called it.
func startPasskeys(t *testing.T, data string) *pkEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	origin := "http://localhost:" + port
	e := echo.New()
	s, err := New(Options{Echo: e, Token: "tok", DataDir: data, Passkeys: &config.AdminPasskeys{Origins: []string{origin}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Group().POST("/approvals/:id/approve", func(c echo.Context) error {
		id, _ := IdentityFrom(c)
		return c.JSON(http.StatusOK, map[string]string{"decided_by": id.String(), "via": id.Via})
	})
	srv := &http.Server{Handler: e}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &pkEnv{base: "http://" + ln.Addr().String() + DefaultPrefix, origin: origin, data: data, srv: s}
}

// call sends body with the client's cookies; bearer "" sends none.
func (e *pkEnv) call(t *testing.T, c *http.Client, method, path, bearer string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type begun struct {
	Ceremony string          `json:"ceremony"`
	Options  json.RawMessage `json:"options"`
}

func (e *pkEnv) begin(t *testing.T, c *http.Client, path, bearer string, body []byte) begun {
	t.Helper()
	code, b := e.call(t, c, "POST", path, bearer, body)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, b)
	}
	var out begun
	json.Unmarshal(b, &out)
	return out
}

// register has the admin token register a passkey on k for name with role.
func (e *pkEnv) register(t *testing.T, k *softKey, name, role string) {
	t.Helper()
	c := &http.Client{}
	body, _ := json.Marshal(map[string]string{"name": name, "role": role})
	b := e.begin(t, c, "/passkeys/register/begin", "tok", body)
	if code, out := e.call(t, c, "POST", "/passkeys/register/finish?ceremony="+b.Ceremony, "tok", k.create(t, b.Options)); code != http.StatusOK {
		t.Fatalf("register finish: %d %s", code, out)
	}
}

// signIn signs in with k in a fresh browser; it returns the browser and the status.
func (e *pkEnv) signIn(t *testing.T, k *softKey) (*http.Client, int, []byte) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	b := e.begin(t, c, "/passkeys/login/begin", "", nil)
	code, out := e.call(t, c, "POST", "/passkeys/login/finish?ceremony="+b.Ceremony, "", k.get(t, b.Options))
	return c, code, out
}

func TestPasskeySignInApproves(t *testing.T) {
	e := startPasskeys(t, t.TempDir())
	carol := newSoftKey(t, "localhost", e.origin)
	e.register(t, carol, "carol@example.com", "approver")

	c, code, out := e.signIn(t, carol)
	if code != http.StatusOK {
		t.Fatalf("sign-in: %d %s", code, out)
	}
	code, out = e.call(t, c, "POST", "/approvals/01JD/approve", "", nil)
	if code != http.StatusOK || !strings.Contains(string(out), `"decided_by":"passkey#carol@example.com"`) || !strings.Contains(string(out), `"via":"passkey"`) {
		t.Fatalf("approve with the passkey session: %d %s", code, out)
	}
	if st, err := os.Stat(filepath.Join(e.data, PasskeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("passkeys file: %v %v, want mode 0600", st, err)
	}

	// A viewer registers a passkey for herself: it signs her in as a viewer, who cannot approve
	// nor register one for someone else.
	dave := newSoftKey(t, "localhost", e.origin)
	e.register(t, dave, "dave", "viewer")
	dc, code, _ := e.signIn(t, dave)
	if code != http.StatusOK {
		t.Fatal("dave's sign-in")
	}
	if code, _ := e.call(t, dc, "POST", "/approvals/01JD/approve", "", nil); code != http.StatusForbidden {
		t.Fatalf("a viewer approved: %d", code)
	}
	body, _ := json.Marshal(map[string]string{"name": "mallory", "role": "admin"})
	if code, _ := e.call(t, dc, "POST", "/passkeys/register/begin", "", body); code != http.StatusForbidden {
		t.Fatalf("a viewer registered a passkey for someone else: %d", code)
	}
	second := newSoftKey(t, "localhost", e.origin)
	b := e.begin(t, dc, "/passkeys/register/begin", "", nil)
	if code, out := e.call(t, dc, "POST", "/passkeys/register/finish?ceremony="+b.Ceremony, "", second.create(t, b.Options)); code != http.StatusOK || !strings.Contains(string(out), `"role":"viewer"`) {
		t.Fatalf("dave's own second passkey: %d %s", code, out)
	}
	// The ceremony was used once.
	if code, _ := e.call(t, dc, "POST", "/passkeys/register/finish?ceremony="+b.Ceremony, "", second.create(t, b.Options)); code != http.StatusBadRequest {
		t.Fatalf("a registration finished twice: %d", code)
	}

	// Kept across a restart: a new server on the same data dir signs carol in.
	e2 := startPasskeysAt(t, e)
	if _, code, out := e2.signIn(t, carol); code != http.StatusOK {
		t.Fatalf("sign-in after a restart: %d %s", code, out)
	}
}

// startPasskeysAt starts a second server on e's data dir, origin unchanged.
func startPasskeysAt(t *testing.T, e *pkEnv) *pkEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ec := echo.New()
	s, err := New(Options{Echo: ec, Token: "tok", DataDir: e.data, Passkeys: &config.AdminPasskeys{Origins: []string{e.origin}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ec}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &pkEnv{base: "http://" + ln.Addr().String() + DefaultPrefix, origin: e.origin, data: e.data, srv: s}
}

func TestPasskeyRefusals(t *testing.T) {
	e := startPasskeys(t, t.TempDir())
	carol := newSoftKey(t, "localhost", e.origin)
	e.register(t, carol, "carol", "approver")

	// A key nobody registered.
	if _, code, _ := e.signIn(t, newSoftKey(t, "localhost", e.origin)); code != http.StatusUnauthorized {
		t.Fatalf("an unregistered key signed in: %d", code)
	}
	// Another site's origin (a phishing page relaying the challenge).
	phish := *carol
	phish.origin = "http://localhost:1"
	if _, code, out := e.signIn(t, &phish); code != http.StatusUnauthorized || !strings.Contains(string(out), "origin") {
		t.Fatalf("an assertion made for another origin signed in: %d", code)
	}
	// The right key, a forged signature.
	forged := *carol
	forged.priv, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, code, out := e.signIn(t, &forged); code != http.StatusUnauthorized || !strings.Contains(string(out), "ignature") {
		t.Fatalf("a signature by another key signed in: %d", code)
	}
	// A replayed assertion: its challenge was another ceremony's.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	b1 := e.begin(t, c, "/passkeys/login/begin", "", nil)
	a1 := carol.get(t, b1.Options)
	if code, out := e.call(t, c, "POST", "/passkeys/login/finish?ceremony="+b1.Ceremony, "", a1); code != http.StatusOK {
		t.Fatalf("sign-in: %d %s", code, out)
	}
	b2 := e.begin(t, c, "/passkeys/login/begin", "", nil)
	if code, _ := e.call(t, c, "POST", "/passkeys/login/finish?ceremony="+b2.Ceremony, "", a1); code != http.StatusUnauthorized {
		t.Fatalf("a replayed assertion signed in: %d", code)
	}
	// An oversized answer is refused, not read whole.
	b3 := e.begin(t, c, "/passkeys/login/begin", "", nil)
	if code, out := e.call(t, c, "POST", "/passkeys/login/finish?ceremony="+b3.Ceremony, "", bytes.Repeat([]byte(" "), maxCredentialBody+1)); code != http.StatusUnauthorized {
		t.Fatalf("an oversized assertion: %d %s", code, out)
	}
	// A cloned key: its counter goes back.
	clone := *carol
	clone.count = 0
	if _, code, out := e.signIn(t, &clone); code != http.StatusUnauthorized || !strings.Contains(string(out), "counter") {
		t.Fatalf("a key whose counter went back signed in: %d %s", code, out)
	}
	// Without a credential, registration is refused; the admin token must name the person.
	if code, _ := e.call(t, &http.Client{}, "POST", "/passkeys/register/begin", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("an anonymous registration: %d", code)
	}
	if code, _ := e.call(t, &http.Client{}, "POST", "/passkeys/register/begin", "tok", nil); code != http.StatusBadRequest {
		t.Fatalf("the admin token registering for nobody: %d", code)
	}
	for _, body := range []string{`{"name":"x","role":"root"}`, `{"name":"a<b>","role":"viewer"}`, `{"name":"","role":"viewer"}`} {
		if code, _ := e.call(t, &http.Client{}, "POST", "/passkeys/register/begin", "tok", []byte(body)); code != http.StatusBadRequest {
			t.Fatalf("registration %s: %d, want 400", body, code)
		}
	}

	// Removed: carol's session ends and she cannot sign in again.
	cc, code, _ := e.signIn(t, carol)
	if code != http.StatusOK {
		t.Fatal("sign-in before removal")
	}
	if code, _ := e.call(t, &http.Client{}, "DELETE", "/passkeys/"+b64.EncodeToString(carol.id), "tok", nil); code != http.StatusNoContent {
		t.Fatalf("remove: %d", code)
	}
	if code, _ := e.call(t, cc, "GET", "/whoami", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("a removed passkey's session: %d", code)
	}
	if _, code, _ := e.signIn(t, carol); code != http.StatusUnauthorized {
		t.Fatalf("a removed passkey signed in: %d", code)
	}
}

func TestPasskeyConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    config.AdminPasskeys
		path string
	}{
		{"no origins", config.AdminPasskeys{}, "admin.passkeys.origins"},
		{"not an origin", config.AdminPasskeys{Origins: []string{"localhost:8420"}}, "admin.passkeys.origins[0]"},
		{"http off loopback", config.AdminPasskeys{Origins: []string{"https://a.example", "http://gw.example"}}, "admin.passkeys.origins[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Options{Echo: echo.New(), Token: "tok", DataDir: t.TempDir(), Passkeys: &tc.c})
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("error %v, want a field error at %s", err, tc.path)
			}
		})
	}
	// An unreadable passkeys file refuses start rather than forgetting who may sign in.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, PasskeyFile), []byte("{not json"), 0o600)
	if _, err := New(Options{Echo: echo.New(), Token: "tok", DataDir: dir, Passkeys: &config.AdminPasskeys{Origins: []string{"http://localhost:1"}}}); err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("a corrupt passkeys file: %v", err)
	}
}
