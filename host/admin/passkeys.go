package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/internal/atomicfile"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/labstack/echo/v4"

	"github.com/added060/palisade/host/config"
)

// PasskeyFile is where registered passkeys are kept, inside the data dir (mode 0600).
const PasskeyFile = "passkeys.json"

// PasskeyIssuer is the issuer of a person an admin registered a passkey for by name (a person
// who registered their own keeps the identity they signed in with).
const PasskeyIssuer = "passkey"

// ceremonyTTL bounds a registration or sign-in between its begin and its finish.
const ceremonyTTL = 5 * time.Minute

// passkeys is the dashboard's sign-in with a passkey (WebAuthn, github.com/go-webauthn/webauthn):
// discoverable credentials with user verification required, kept per person in
// DATA_DIR/passkeys.json. A passkey signs its holder in with the identity and role it was
// registered with; every sign-in checks the signature counter and refuses a cloned key.
type passkeys struct {
	wa     *webauthn.WebAuthn
	path   string
	secure bool
	ttl    time.Duration
	log    *slog.Logger

	mu         sync.Mutex
	people     []*passkeyPerson
	ceremonies map[string]*ceremony
	now        func() time.Time
}

// passkeyPerson is one person and their passkeys (one per device).
type passkeyPerson struct {
	Handle       []byte                `json:"handle"` // the WebAuthn user handle: random, 32 bytes
	Issuer       string                `json:"issuer"`
	Subject      string                `json:"subject"`
	Name         string                `json:"name"`
	Role         Role                  `json:"role"`
	RegisteredBy string                `json:"registered_by"`
	Credentials  []webauthn.Credential `json:"credentials"`
}

func (p *passkeyPerson) WebAuthnID() []byte                         { return p.Handle }
func (p *passkeyPerson) WebAuthnName() string                       { return p.Name }
func (p *passkeyPerson) WebAuthnDisplayName() string                { return p.Name }
func (p *passkeyPerson) WebAuthnCredentials() []webauthn.Credential { return p.Credentials }

func (p *passkeyPerson) identity() Identity {
	return Identity{Issuer: p.Issuer, Subject: p.Subject, Name: p.Name, Role: p.Role, Via: "passkey"}
}

// ceremony is a registration or sign-in between begin and finish: used once.
type ceremony struct {
	data    webauthn.SessionData
	person  *passkeyPerson // registration: who gets the passkey (not yet stored)
	caller  string         // registration: who began it (Identity.String); finish must be them
	expires time.Time
}

type passkeyFile struct {
	People []*passkeyPerson `json:"people"`
}

// UnmarshalText reads a role's name.
func (r *Role) UnmarshalText(b []byte) error {
	for _, x := range []Role{RoleViewer, RoleApprover, RoleAdmin} {
		if string(b) == x.String() {
			*r = x
			return nil
		}
	}
	return fmt.Errorf("role %q is not viewer, approver or admin", b)
}

func newPasskeys(c config.AdminPasskeys, dataDir string, log *slog.Logger) (*passkeys, error) {
	if len(c.Origins) == 0 {
		return nil, &config.FieldError{Path: "admin.passkeys.origins", Err: errors.New("required: the dashboard's origins, e.g. [https://gateway.example.com]")}
	}
	secure := false
	for i, o := range c.Origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
			return nil, &config.FieldError{Path: fmt.Sprintf("admin.passkeys.origins[%d]", i), Err: fmt.Errorf("%q is not an origin (scheme://host[:port])", o)}
		}
		if u.Scheme == "http" && !loopback(u.Hostname()) {
			return nil, &config.FieldError{Path: fmt.Sprintf("admin.passkeys.origins[%d]", i), Err: fmt.Errorf("%q: passkeys need https (or http on loopback)", o)}
		}
		secure = secure || u.Scheme == "https"
	}
	rp := c.RPID
	if rp == "" {
		u, _ := url.Parse(c.Origins[0])
		rp = u.Hostname()
	}
	if dataDir == "" {
		return nil, errors.New("admin.passkeys: a data dir is required to keep registered passkeys")
	}
	wa, err := webauthn.New(&webauthn.Config{RPID: rp, RPDisplayName: "Palisade", RPOrigins: c.Origins,
		AuthenticatorSelection: protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(), UserVerification: protocol.VerificationRequired}})
	if err != nil {
		return nil, &config.FieldError{Path: "admin.passkeys", Err: err}
	}
	ttl := c.Session.D()
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	pk := &passkeys{wa: wa, path: filepath.Join(dataDir, PasskeyFile), secure: secure, ttl: ttl, log: log,
		ceremonies: map[string]*ceremony{}, now: time.Now}
	b, err := os.ReadFile(pk.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("admin.passkeys: %w", err)
	default:
		var f passkeyFile
		if err := json.Unmarshal(b, &f); err != nil {
			// Refuse rather than forget: an unreadable file must not drop who may sign in
			// silently, nor be overwritten by the next registration.
			return nil, fmt.Errorf("admin.passkeys: %s unreadable (fix or remove it): %w", pk.path, err)
		}
		pk.people = f.People
	}
	return pk, nil
}

// save writes the people atomically (mode 0600). mu is held.
func (pk *passkeys) save() error {
	b, err := json.MarshalIndent(passkeyFile{People: pk.people}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(pk.path, b, 0o600)
}

// put stores a ceremony and returns its id. mu is held.
func (pk *passkeys) put(c *ceremony) (string, error) {
	now := pk.now()
	for k, x := range pk.ceremonies {
		if now.After(x.expires) {
			delete(pk.ceremonies, k)
		}
	}
	if len(pk.ceremonies) > 10_000 {
		return "", errors.New("too many passkey ceremonies in progress")
	}
	id := randomHex(16)
	c.expires = now.Add(ceremonyTTL)
	pk.ceremonies[id] = c
	return id, nil
}

// take removes and returns the ceremony id, if it is known and fresh. mu is held.
func (pk *passkeys) take(id string) (*ceremony, bool) {
	c, ok := pk.ceremonies[id]
	delete(pk.ceremonies, id)
	if !ok || pk.now().After(c.expires) {
		return nil, false
	}
	return c, true
}

// find returns the person with the identity's issuer and subject, or with the user handle h.
// mu is held.
func (pk *passkeys) find(issuer, subject string, h []byte) *passkeyPerson {
	for _, p := range pk.people {
		if h != nil && bytes.Equal(p.Handle, h) || h == nil && p.Issuer == issuer && p.Subject == subject {
			return p
		}
	}
	return nil
}

// passkeyInfo is GET {prefix}/passkeys, without authentication: whether the dashboard offers
// a sign-in with a passkey.
func (s *Server) passkeyInfo(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"enabled": s.pk != nil})
}

// passkeyRegisterBegin is POST {prefix}/passkeys/register/begin: the options for
// navigator.credentials.create. Without a body the passkey is the caller's own, with the
// identity and role they are signed in with; {"name", "role"} registers one for another person
// (admin only). The answer is {"ceremony", "options"}; finish with the same caller.
func (s *Server) passkeyRegisterBegin(c echo.Context) error {
	caller, _ := IdentityFrom(c)
	var body struct {
		Name string `json:"name"`
		Role string `json:"role"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 4096)).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		return Error(c, http.StatusBadRequest, "body: "+err.Error())
	}
	pk := s.pk
	pk.mu.Lock()
	defer pk.mu.Unlock()
	var who *passkeyPerson
	switch {
	case body.Name == "" && body.Role == "":
		if caller.BreakGlass {
			return Error(c, http.StatusBadRequest, "the admin token is nobody: name the person and their role ({\"name\", \"role\"})")
		}
		who = pk.find(caller.Issuer, caller.Subject, nil)
		if who == nil {
			who = &passkeyPerson{Issuer: caller.Issuer, Subject: caller.Subject, Name: caller.Name}
		}
		who = clonePerson(who)
		who.Role = caller.Role
	case caller.Role < RoleAdmin:
		return forbidden(c, caller, RoleAdmin)
	default:
		var role Role
		if err := role.UnmarshalText([]byte(body.Role)); err != nil {
			return Error(c, http.StatusBadRequest, "role: "+err.Error())
		}
		name := strings.TrimSpace(body.Name)
		if name == "" || len(name) > 128 || strings.ContainsAny(name, "<>#\n") {
			return Error(c, http.StatusBadRequest, "name: give the person's name or email (no <, >, # or newline; at most 128 bytes)")
		}
		who = pk.find(PasskeyIssuer, name, nil)
		if who == nil {
			who = &passkeyPerson{Issuer: PasskeyIssuer, Subject: name, Name: name}
		}
		who = clonePerson(who)
		who.Role = role
	}
	if who.Handle == nil {
		who.Handle = make([]byte, 32)
		_, _ = rand.Read(who.Handle)
	}
	who.RegisteredBy = caller.String()
	opts, data, err := pk.wa.BeginRegistration(who, webauthn.WithExclusions(webauthn.Credentials(who.Credentials).CredentialDescriptors()))
	if err != nil {
		return Error(c, http.StatusInternalServerError, "passkey registration: "+err.Error())
	}
	id, err := pk.put(&ceremony{data: *data, person: who, caller: caller.String()})
	if err != nil {
		return Error(c, http.StatusServiceUnavailable, err.Error())
	}
	return c.JSON(http.StatusOK, map[string]any{"ceremony": id, "options": opts})
}

// passkeyRegisterFinish is POST {prefix}/passkeys/register/finish?ceremony=ID with the
// browser's credential: the attestation checked (origin, RP id, challenge, user verification)
// and the passkey stored. {"name", "role", "credential"} (the credential's id, base64url).
func (s *Server) passkeyRegisterFinish(c echo.Context) error {
	caller, _ := IdentityFrom(c)
	pk := s.pk
	pk.mu.Lock()
	defer pk.mu.Unlock()
	cer, ok := pk.take(c.QueryParam("ceremony"))
	if !ok || cer.person == nil {
		return Error(c, http.StatusBadRequest, "unknown or expired passkey registration: begin again")
	}
	if cer.caller != caller.String() {
		return Error(c, http.StatusForbidden, "this registration was begun by someone else")
	}
	limitBody(c)
	cred, err := pk.wa.FinishRegistration(cer.person, cer.data, c.Request())
	if err != nil {
		return Error(c, http.StatusBadRequest, "passkey registration refused: "+protocolError(err))
	}
	who := cer.person
	who.Credentials = append(who.Credentials, *cred)
	people := slices.Clone(pk.people)
	if i := slices.IndexFunc(people, func(p *passkeyPerson) bool { return bytes.Equal(p.Handle, who.Handle) }); i >= 0 {
		people[i] = who
	} else {
		people = append(people, who)
	}
	old := pk.people
	pk.people = people
	if err := pk.save(); err != nil {
		pk.people = old
		return Error(c, http.StatusInternalServerError, "passkey not stored: "+err.Error())
	}
	s.o.Logger.Info("passkey registered", "for", who.identity().String(), "role", who.Role.String(), "by", caller.String())
	return c.JSON(http.StatusOK, map[string]any{"name": who.Name, "role": who.Role, "credential": base64.RawURLEncoding.EncodeToString(cred.ID)})
}

// passkeyLoginBegin is POST {prefix}/passkeys/login/begin, without authentication: the options
// for navigator.credentials.get (a discoverable credential: the authenticator says whose).
func (s *Server) passkeyLoginBegin(c echo.Context) error {
	pk := s.pk
	opts, data, err := pk.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Error(c, http.StatusInternalServerError, "passkey sign-in: "+err.Error())
	}
	pk.mu.Lock()
	id, err := pk.put(&ceremony{data: *data})
	pk.mu.Unlock()
	if err != nil {
		return Error(c, http.StatusServiceUnavailable, err.Error())
	}
	return c.JSON(http.StatusOK, map[string]any{"ceremony": id, "options": opts})
}

// passkeyLoginFinish is POST {prefix}/passkeys/login/finish?ceremony=ID with the browser's
// assertion: the signature checked against the stored key (origin, RP id, challenge, user
// verification), the counter checked and kept; then a session with the person's identity and
// role.
func (s *Server) passkeyLoginFinish(c echo.Context) error {
	pk := s.pk
	pk.mu.Lock()
	defer pk.mu.Unlock()
	cer, ok := pk.take(c.QueryParam("ceremony"))
	if !ok || cer.person != nil {
		return Error(c, http.StatusBadRequest, "unknown or expired passkey sign-in: begin again")
	}
	limitBody(c)
	var who *passkeyPerson
	user, cred, err := pk.wa.FinishPasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
		if who = pk.find("", "", handle); who == nil {
			return nil, errors.New("no such person")
		}
		return who, nil
	}, cer.data, c.Request())
	if err != nil || user == nil {
		s.o.Logger.Warn("passkey sign-in refused", "err", err)
		return Error(c, http.StatusUnauthorized, "passkey sign-in refused: "+protocolError(err))
	}
	if cred.Authenticator.CloneWarning {
		s.o.Logger.Warn("passkey sign-in refused: the signature counter went back (a cloned key?)", "who", who.identity().String())
		return Error(c, http.StatusUnauthorized, "passkey sign-in refused: its signature counter went back, which a cloned key does; register it again")
	}
	i := slices.IndexFunc(who.Credentials, func(x webauthn.Credential) bool { return bytes.Equal(x.ID, cred.ID) })
	if i < 0 {
		return Error(c, http.StatusUnauthorized, "passkey sign-in refused: unknown credential")
	}
	upd := clonePerson(who)
	upd.Credentials[i].Authenticator.SignCount = cred.Authenticator.SignCount
	j := slices.Index(pk.people, who)
	pk.people = slices.Clone(pk.people)
	pk.people[j] = upd
	if err := pk.save(); err != nil {
		pk.people[j] = who
		return Error(c, http.StatusInternalServerError, "passkey counter not stored: "+err.Error())
	}
	id := upd.identity()
	if id.Role == RoleNone {
		return Error(c, http.StatusForbidden, id.String()+" has no role here")
	}
	s.sess.start(c, id)
	s.o.Logger.Info("dashboard sign-in with a passkey", "who", id.String(), "role", id.Role.String())
	return c.JSON(http.StatusOK, id)
}

// passkeyList is GET {prefix}/passkeys/list: the registered passkeys (an admin sees everyone's,
// anyone else their own): {"passkeys": [{"credential", "name", "role", "issuer", "subject",
// "registered_by", "sign_count"}]}.
func (s *Server) passkeyList(c echo.Context) error {
	caller, _ := IdentityFrom(c)
	pk := s.pk
	pk.mu.Lock()
	defer pk.mu.Unlock()
	out := []map[string]any{}
	for _, p := range pk.people {
		if caller.Role < RoleAdmin && (p.Issuer != caller.Issuer || p.Subject != caller.Subject) {
			continue
		}
		for _, cr := range p.Credentials {
			out = append(out, map[string]any{"credential": base64.RawURLEncoding.EncodeToString(cr.ID), "name": p.Name, "role": p.Role,
				"issuer": p.Issuer, "subject": p.Subject, "registered_by": p.RegisteredBy, "sign_count": cr.Authenticator.SignCount})
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"passkeys": out})
}

// passkeyDelete is DELETE {prefix}/passkeys/{credential} (admin): the passkey is removed, and
// a person left without one is signed out.
func (s *Server) passkeyDelete(c echo.Context) error {
	raw, err := base64.RawURLEncoding.DecodeString(c.Param("id"))
	if err != nil {
		return Error(c, http.StatusBadRequest, "id: not a base64url credential id")
	}
	pk := s.pk
	pk.mu.Lock()
	defer pk.mu.Unlock()
	for j, p := range pk.people {
		i := slices.IndexFunc(p.Credentials, func(x webauthn.Credential) bool { return bytes.Equal(x.ID, raw) })
		if i < 0 {
			continue
		}
		upd := clonePerson(p)
		upd.Credentials = slices.Delete(upd.Credentials, i, i+1)
		old := pk.people
		pk.people = slices.Clone(pk.people)
		if len(upd.Credentials) == 0 {
			pk.people = slices.Delete(pk.people, j, j+1)
		} else {
			pk.people[j] = upd
		}
		if err := pk.save(); err != nil {
			pk.people = old
			return Error(c, http.StatusInternalServerError, "passkeys not stored: "+err.Error())
		}
		if len(upd.Credentials) == 0 {
			s.sess.endWhere(func(id Identity) bool { return id.Via == "passkey" && id.Issuer == p.Issuer && id.Subject == p.Subject })
		}
		caller, _ := IdentityFrom(c)
		s.o.Logger.Info("passkey removed", "for", p.identity().String(), "by", caller.String())
		return c.NoContent(http.StatusNoContent)
	}
	return Error(c, http.StatusNotFound, "no passkey has that id")
}

// maxCredentialBody bounds a browser's credential JSON (a few KiB; attestation certificates
// included); the sign-in routes take it without authentication.
const maxCredentialBody = 64 << 10

func limitBody(c echo.Context) {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, maxCredentialBody)
}

// clonePerson copies p with its own credentials slice (the stored one is never changed in place:
// a failed save keeps it).
func clonePerson(p *passkeyPerson) *passkeyPerson {
	c := *p
	c.Credentials = slices.Clone(p.Credentials)
	return &c
}

// protocolError is the library's error with its detail (protocol.Error says what failed).
func protocolError(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return pe.Details + ": " + pe.DevInfo
	}
	if err == nil {
		return "no user"
	}
	return err.Error()
}
