package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Cookie names. The session cookie is scoped to /dashboard; the login cookie only to the
// login form, whose CSRF token it anchors before any session exists.
const (
	sessionCookie = "sr_session"
	loginCookie   = "sr_login"
	cookiePath    = "/dashboard"
	loginPath     = "/dashboard/login"
	// sessionFormat is "2" since sessions carry the shop's key version; a format-1
	// cookie (from before) is refused, since it cannot show which key it came from.
	sessionFormat = "2"
	// loginCookieTTL bounds how long a login form stays usable.
	loginCookieTTL = time.Hour
)

// session is what a valid session cookie says: which shop, until when, a random id
// that the CSRF token of its forms is derived from, and the version of the shop's API
// key it was signed in under (shops.Shop.KeyVersion): once the key is rotated the
// versions differ and the session is over.
type session struct {
	ShopID     uuid.UUID
	Expires    time.Time
	ID         string
	KeyVersion int
}

// mac is HMAC-SHA256 under the server secret. The purpose string keeps the MACs of
// cookies, CSRF tokens and login tokens apart, so one can never stand in for another.
func (d *Dashboard) mac(purpose, msg string) []byte {
	h := hmac.New(sha256.New, d.cfg.SessionSecret)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// encodeSession makes the cookie value:
// "2.<shop id>.<expiry unix>.<session id>.<key version>.<mac>". Every part is
// cookie-safe, so no further encoding is needed.
func (d *Dashboard) encodeSession(s session) string {
	payload := strings.Join([]string{sessionFormat, s.ShopID.String(), strconv.FormatInt(s.Expires.Unix(), 10), s.ID,
		strconv.Itoa(s.KeyVersion)}, ".")
	return payload + "." + base64.RawURLEncoding.EncodeToString(d.mac("session", payload))
}

// decodeSession checks a cookie value's MAC (in constant time) and expiry.
func (d *Dashboard) decodeSession(v string, now time.Time) (session, bool) {
	i := strings.LastIndexByte(v, '.')
	if i < 0 || len(v) > 200 {
		return session{}, false
	}
	payload, sig := v[:i], v[i+1:]
	// Compare the encoded MACs: decoding first would accept other spellings of the same
	// bytes (base64's unused low bits), a malleable cookie.
	want := base64.RawURLEncoding.EncodeToString(d.mac("session", payload))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return session{}, false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 5 || parts[0] != sessionFormat {
		return session{}, false
	}
	shopID, err := uuid.Parse(parts[1])
	if err != nil {
		return session{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return session{}, false
	}
	keyVersion, err := strconv.Atoi(parts[4])
	if err != nil || keyVersion < 1 {
		return session{}, false
	}
	return session{ShopID: shopID, Expires: time.Unix(exp, 0), ID: parts[3], KeyVersion: keyVersion}, true
}

// newSession starts a session for shopID, signed in under its API key of version
// keyVersion.
func (d *Dashboard) newSession(shopID uuid.UUID, keyVersion int) (session, error) {
	id, err := randomHex(16)
	if err != nil {
		return session{}, err
	}
	return session{ShopID: shopID, Expires: d.cfg.Now().Add(d.cfg.SessionTTL).Truncate(time.Second), ID: id,
		KeyVersion: keyVersion}, nil
}

// csrfToken is the token every form of a session carries. It is derived from the
// session id, so it needs no storage and changes with every sign-in.
func (d *Dashboard) csrfToken(s session) string {
	return base64.RawURLEncoding.EncodeToString(d.mac("csrf", s.ID))
}

// validCSRF compares a submitted token with the expected one in constant time.
func validCSRF(got, want string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(want))
}

// loginToken is the login form's CSRF token: a MAC of the random nonce in the login
// cookie (a signed double-submit cookie), so a forged form needs both the cookie and
// the server secret.
func (d *Dashboard) loginToken(nonce string) string {
	return base64.RawURLEncoding.EncodeToString(d.mac("login", nonce))
}

func (d *Dashboard) cookie(name, value, path string, ttl time.Duration) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: path,
		Expires: d.cfg.Now().Add(ttl), MaxAge: int(ttl / time.Second),
		HttpOnly: true, Secure: d.cfg.Secure, SameSite: http.SameSiteLaxMode,
	}
}

func (d *Dashboard) expiredCookie(name, path string) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: "", Path: path, Expires: time.Unix(0, 0), MaxAge: -1,
		HttpOnly: true, Secure: d.cfg.Secure, SameSite: http.SameSiteLaxMode,
	}
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("dashboard: random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}
