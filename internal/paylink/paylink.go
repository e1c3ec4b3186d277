// Package paylink makes a held booking's payment link short and ours:
// PUBLIC_URL/p/{code}, which answers with a redirect to the booking's Stripe Checkout
// page while the hold lasts. A Checkout address is about 150 characters, so an answer
// carrying it took a segment more than it needs; a public shortener would be shorter
// still, but carriers filter texts that carry one.
//
// The code is the booking's id encrypted under a key derived from SECRETS_KEY (one
// AES block, 22 characters of base64url): unguessable without the key, nothing to
// store, so the YES path writes nothing more for it. A code made under a key the ring
// has since replaced still opens while that key is configured (each key is tried).
package paylink

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
)

// Path is the links' route (echo's syntax); the code is its last segment.
const Path = "/p/:code"

// prefix is what precedes the code in a link's path.
const prefix = "/p/"

// CodeLen is the length of a code: 16 bytes in unpadded base64url.
const CodeLen = 22

var queries = db.New()

// Links makes and serves the short links.
type Links struct {
	publicURL string
	blocks    []cipher.Block // one per key of the ring, newest first
	pool      db.DBTX
	now       func() time.Time
}

// New returns the links of publicURL (the server's PUBLIC_URL), whose codes are made
// under ring's newest key and opened under any of its keys; pool reads the bookings.
func New(pool db.DBTX, ring *keyring.Ring, publicURL string) (*Links, error) {
	l := &Links{publicURL: strings.TrimRight(publicURL, "/"), pool: pool, now: time.Now}
	for _, id := range ring.IDs() {
		k, err := ring.Derive(id, []byte("payment link v1"))
		if err != nil {
			return nil, fmt.Errorf("paylink: %w", err)
		}
		b, err := aes.NewCipher(k) // 32 bytes: AES-256
		if err != nil {
			return nil, fmt.Errorf("paylink: %w", err)
		}
		l.blocks = append(l.blocks, b)
	}
	return l, nil
}

// URL returns the short link of a booking: PUBLIC_URL/p/{code}.
func (l *Links) URL(bookingID uuid.UUID) string {
	var enc [aes.BlockSize]byte
	l.blocks[0].Encrypt(enc[:], bookingID[:])
	return l.publicURL + prefix + base64.RawURLEncoding.EncodeToString(enc[:])
}

// candidates returns the booking ids code may stand for, one per key; none when code
// is not one of ours in shape.
func (l *Links) candidates(code string) []uuid.UUID {
	if len(code) != CodeLen {
		return nil
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(code)
	if err != nil || len(raw) != aes.BlockSize {
		return nil
	}
	out := make([]uuid.UUID, len(l.blocks))
	for i, b := range l.blocks {
		b.Decrypt(out[i][:], raw)
	}
	return out
}

// ServeHTTP answers GET Path: a redirect to the Checkout page while the booking is
// held for payment, else a short page in the customer's language saying why there is
// nothing to pay (already paid, or the hold ended). Nothing in the answer tells a
// wrong code from a booking that is gone.
func (l *Links) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Robots-Tag", "noindex")
	code, _ := strings.CutPrefix(r.URL.Path, prefix)
	ids := l.candidates(code)
	if ids == nil {
		page(w, http.StatusNotFound, "en", pages["en"].gone, "")
		return
	}
	b, err := queries.PaylinkFind(r.Context(), l.pool, ids)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		page(w, http.StatusNotFound, "en", pages["en"].gone, "")
		return
	case err != nil:
		page(w, http.StatusServiceUnavailable, "en", pages["en"].retry, "")
		return
	}
	p, ok := pages[b.Language]
	if !ok {
		b.Language, p = "en", pages["en"]
	}
	switch {
	case b.Status == "pending_payment" && b.PaymentUrl != "" && b.CheckoutExpiresAt != nil && l.now().Before(*b.CheckoutExpiresAt):
		http.Redirect(w, r, b.PaymentUrl, http.StatusFound)
	case b.Status == "confirmed" || b.Status == "moved":
		// moved: moved up to an earlier time with its payment (the booking it became
		// holds it), so the link the customer was texted for it is a paid booking's.
		page(w, http.StatusOK, b.Language, p.paid, b.ShopName)
	default:
		page(w, http.StatusGone, b.Language, p.gone, b.ShopName)
	}
}

// texts of the pages, by language.
type texts struct{ title, paid, gone, retry string }

var pages = map[string]texts{
	"en": {title: "Payment", paid: "This booking is paid. See you then!",
		gone:  "This payment link has ended: the slot was held for a while and then released. Reply to the shop's text if you still want a time.",
		retry: "Something went wrong on our side. Please try the link again in a minute."},
	"es": {title: "Pago", paid: "Esta cita ya está pagada. ¡Hasta pronto!",
		gone:  "Este enlace de pago ya no es válido: el turno se reservó un tiempo y luego se liberó. Responde al mensaje del negocio si aún quieres un horario.",
		retry: "Algo falló de nuestro lado. Vuelve a abrir el enlace en un minuto."},
	"fr": {title: "Paiement", paid: "Ce rendez-vous est payé. À bientôt !",
		gone:  "Ce lien de paiement n'est plus valable : le créneau a été réservé un moment, puis libéré. Répondez au SMS du salon si vous voulez toujours un horaire.",
		retry: "Une erreur est survenue de notre côté. Réessayez le lien dans une minute."},
}

func page(w http.ResponseWriter, status int, lang, msg, shop string) {
	title := pages[lang].title
	heading := "Slot recovery"
	if shop != "" {
		heading = shop
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `<!doctype html><html lang="`+lang+`"><meta charset="utf-8">`+
		`<meta name="viewport" content="width=device-width,initial-scale=1"><title>`+title+`</title>`+
		`<body><h1>`+html.EscapeString(heading)+`</h1><p>`+html.EscapeString(msg)+`</p></body></html>`)
}
