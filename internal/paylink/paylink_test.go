package paylink_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/paylink"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// booking stores a booking of a new customer in status, held until expires.
func booking(t *testing.T, pool *pgxpool.Pool, shop shops.Shop, phone, lang, status string, expires time.Time) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	c, err := customertest.New(t, pool).Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, SMSOptIn: true, Language: language.Code(lang)})
	require.NoError(t, err)
	var id uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `WITH o AS (
			INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
			VALUES ($1, now() + interval '5 hours', 30, 'Cut', 2500, 'open', now(), now()) RETURNING id)
		INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, payment_url, checkout_expires_at, created_at, updated_at)
		SELECT o.id, $2, $1, $3, 2500, 'usd', 'https://checkout.stripe.com/c/pay/cs_test_' || $4::text, $5, now(), now() FROM o
		RETURNING id`, shop.ID, c.ID, status, phone, expires).Scan(&id))
	return id
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// TestShortLinks: a held booking's short link redirects to its Checkout page until the
// hold ends, then says so in the customer's language; a paid booking's link says it is
// paid; a code made under a replaced key still opens; codes that are not ours, or are
// ours but name no booking, are 404 and tell nothing more.
func TestShortLinks(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "Joe's <Barbers>", Timezone: "UTC",
		SMSNumber: "+15550001000", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	now := time.Now()
	held := booking(t, pool, shop, "+15551110001", "en", "pending_payment", now.Add(10*time.Minute))
	lapsed := booking(t, pool, shop, "+15551110002", "es", "pending_payment", now.Add(-time.Minute))
	paid := booking(t, pool, shop, "+15551110003", "fr", "confirmed", now.Add(-time.Minute))
	failed := booking(t, pool, shop, "+15551110004", "en", "payment_failed", now.Add(10*time.Minute))

	oldKey, newKey := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	ringOld, err := keyring.New(oldKey)
	require.NoError(t, err)
	ringBoth, err := keyring.New(newKey, oldKey)
	require.NoError(t, err)

	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	before, err := paylink.New(pool, ringOld, srv.URL+"/")
	require.NoError(t, err)
	links, err := paylink.New(pool, ringBoth, srv.URL)
	require.NoError(t, err)
	e.GET(paylink.Path, echo.WrapHandler(links))

	u := links.URL(held)
	require.Len(t, strings.TrimPrefix(u, srv.URL+"/p/"), paylink.CodeLen, "the code: %s", u)
	require.NotContains(t, u, held.String()[:8], "the code does not show the booking's id")
	require.NotEqual(t, u, before.URL(held), "each key makes its own code")
	require.Equal(t, u, links.URL(held), "a booking's code is stable")

	resp, _ := get(t, u)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "https://checkout.stripe.com/c/pay/cs_test_+15551110001", resp.Header.Get("Location"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))

	resp, _ = get(t, before.URL(held))
	require.Equal(t, http.StatusFound, resp.StatusCode, "a code made under the replaced key still opens")

	resp, body := get(t, links.URL(lapsed))
	require.Equal(t, http.StatusGone, resp.StatusCode)
	require.Contains(t, body, "Este enlace de pago ya no es válido")
	require.Contains(t, body, "Joe&#39;s &lt;Barbers&gt;", "the shop's name, escaped")
	require.NotContains(t, body, "checkout.stripe.com")

	resp, body = get(t, links.URL(paid))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "Ce rendez-vous est payé")
	// A paid booking moved up since (its payment went with it): the link it was texted
	// says it is paid, not that the slot was released.
	moved := booking(t, pool, shop, "+15551110005", "en", "confirmed", now.Add(-time.Minute))
	_, err = pool.Exec(ctx, `UPDATE bookings SET status = 'moved', moved_to = $2 WHERE id = $1`, moved, paid)
	require.NoError(t, err)
	resp, body = get(t, links.URL(moved))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "This booking is paid")

	resp, _ = get(t, links.URL(failed))
	require.Equal(t, http.StatusGone, resp.StatusCode)

	// The hold ends while the link is open in a tab.
	paylink.SetNow(links, func() time.Time { return now.Add(11 * time.Minute) })
	resp, _ = get(t, u)
	require.Equal(t, http.StatusGone, resp.StatusCode, "the hold has ended")

	var notFound []string
	for _, code := range []string{"x", strings.Repeat("A", paylink.CodeLen), strings.Repeat("!", paylink.CodeLen),
		strings.TrimPrefix(links.URL(uuid.New()), srv.URL+"/p/"), strings.Repeat("A", paylink.CodeLen+1)} {
		resp, body := get(t, srv.URL+"/p/"+code)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, "Joe") {
			notFound = append(notFound, code+": "+resp.Status)
		}
	}
	require.Empty(t, notFound, "codes that name no booking answer 404 and name no shop")
}
