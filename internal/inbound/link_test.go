package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// checkouts is the payment provider's checkout side; the rest of the provider is never
// called on the YES path.
type checkouts struct {
	ledger.PaymentProvider
	mu  sync.Mutex
	err error
	// meanwhile runs before the answer, as if it happened while the provider worked.
	meanwhile func(bookingID string)
	// asked are the requests the provider was sent.
	asked []payments.CheckoutRequest
}

func (c *checkouts) CreateCheckout(_ context.Context, r payments.CheckoutRequest) (payments.Checkout, error) {
	c.mu.Lock()
	err, meanwhile := c.err, c.meanwhile
	c.asked = append(c.asked, r)
	c.mu.Unlock()
	if meanwhile != nil {
		meanwhile(r.BookingID)
	}
	if err != nil {
		return payments.Checkout{}, err
	}
	return payments.Checkout{SessionID: "cs_" + r.BookingID, URL: "https://pay.example/" + r.BookingID, ExpiresAt: r.ExpiresAt}, nil
}

// checkoutWorld is newWorld's shop taking payments by checkout, with a ledger whose
// provider is co.
func checkoutWorld(t *testing.T, n int, co *checkouts) *world {
	t.Helper()
	w := newWorld(t, 0)
	ctx := context.Background()
	shopsSvc := shops.New(w.pool, shops.Config{PaymentsEnabled: true})
	w.ledger = ledger.New(w.pool, w.queue, co, ledger.Config{})
	w.inbound = inbound.New(w.pool, w.queue, shopsSvc, w.customers, w.slots, w.ledger, inbound.Config{})
	var err error
	w.shop, _, err = shopsSvc.Create(ctx, shops.NewShop{Name: "Cash Cuts", Timezone: "UTC", SMSNumber: "+15550007001",
		Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	for i := range n {
		op, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+1555700%04d", i), SMSOptIn: true})
		require.NoError(t, err)
		_, err = w.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, w.shop.ID)
		require.NoError(t, err)
		w.phones = append(w.phones, c.Phone)
	}
	return w
}

// TestAWinnersAnswerIsStoredWithItsLink: a winning YES is answered with its payment
// link, and that answer is stored in the round trip that stores the link, so a
// redelivery repeats it. When the booking sweep stored its own link while the provider
// answered the YES path, or the provider failed, the answer says the link follows (the
// sweep texts it) and names no link.
func TestAWinnersAnswerIsStoredWithItsLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	co := &checkouts{}
	w := checkoutWorld(t, 3, co)
	stored := func(sid string) (outcome, reply, booking string) {
		t.Helper()
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT outcome, reply, booking_id::text FROM inbound_messages WHERE message_sid = $1`, sid).
			Scan(&outcome, &reply, &booking))
		return outcome, reply, booking
	}
	link := func(bookingID string) string {
		t.Helper()
		var url *string
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT payment_url FROM bookings WHERE id = $1`, bookingID).Scan(&url))
		if url == nil {
			return ""
		}
		return *url
	}

	won := w.yes(t, "SMlinked", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, won.Outcome)
	url := "https://pay.example/" + won.BookingID.String()
	require.Contains(t, won.Message, url)
	require.Equal(t, url, link(won.BookingID.String()))
	outcome, reply, booking := stored("SMlinked")
	require.Equal(t, []string{"booked", won.Message, won.BookingID.String()}, []string{outcome, reply, booking})
	again := w.yes(t, "SMlinked", w.phones[0])
	require.True(t, again.Replayed)
	require.Equal(t, won.Message, again.Message, "a redelivery repeats the answer with its link")

	// The booking sweep stores its link while the provider answers the YES path.
	co.meanwhile = func(bookingID string) {
		_, err := w.pool.Exec(ctx, `UPDATE bookings SET payment_url = 'https://pay.example/sweep', stripe_checkout_session_id = 'cs_sweep'
			WHERE id = $1 AND payment_url IS NULL`, bookingID)
		require.NoError(t, err)
	}
	raced := w.yes(t, "SMraced", w.phones[1])
	require.Equal(t, inbound.OutcomeBooked, raced.Outcome)
	require.NotContains(t, raced.Message, "https://", "the sweep's link is the sweep's to text")
	require.Equal(t, "https://pay.example/sweep", link(raced.BookingID.String()))
	_, reply, _ = stored("SMraced")
	require.Equal(t, raced.Message, reply)

	// The provider fails: the booking holds, its link follows.
	co.meanwhile, co.err = nil, errors.New("stripe: connection reset")
	failed := w.yes(t, "SMfailed", w.phones[2])
	require.Equal(t, inbound.OutcomeBooked, failed.Outcome)
	require.Empty(t, link(failed.BookingID.String()))
	shop, err := shops.Read(ctx, w.pool, w.shop.ID)
	require.NoError(t, err)
	var startsAt time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT o.starts_at FROM slot_openings o JOIN bookings b ON b.opening_id = o.id WHERE b.id = $1`, failed.BookingID).Scan(&startsAt))
	require.Equal(t, texts.English.BookedLinkFollows(&shop, "Cut", startsAt), failed.Message)
}

// TestThePaymentPageSpeaksTheCustomersLanguage: a customer who books with "Sí" gets the
// payment page in Spanish, its line item worded in Spanish with Spanish day and month;
// an English customer's page is in English.
func TestThePaymentPageSpeaksTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	co := &checkouts{}
	w := checkoutWorld(t, 2, co)
	require.Equal(t, inbound.OutcomeBooked, w.reply(t, "SMsi", 0, "Sí, por favor").Outcome)
	require.Equal(t, inbound.OutcomeBooked, w.reply(t, "SMyes", 1, "yes").Outcome)
	require.Len(t, co.asked, 2)
	es, en := co.asked[0], co.asked[1]
	require.Equal(t, "es", es.Locale)
	require.Regexp(t, `^Cut en Cash Cuts, [a-záéíóú]{3}\. \d{1,2} [a-z]{3,4}\.? a las? \d{2}:\d{2}$`, es.Description)
	require.Equal(t, "en", en.Locale)
	require.Regexp(t, `^Cut at Cash Cuts, [A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2} \d{2}:\d{2}$`, en.Description)
}

// shortLinks makes short links as internal/paylink does, on a domain of the test's.
type shortLinks struct{}

func (shortLinks) URL(id uuid.UUID) string { return "https://slots.example/p/" + id.String()[:8] }

// TestTheAnswerCarriesTheShortLink: with short links (PUBLIC_URL/p/{code}), a winner's
// answer carries the short link, never the provider's long address, which stays the
// booking's (the short link's redirect target); a redelivery repeats the same answer.
func TestTheAnswerCarriesTheShortLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	co := &checkouts{}
	w := checkoutWorld(t, 1, co)
	shopsSvc := shops.New(w.pool, shops.Config{PaymentsEnabled: true})
	w.ledger = ledger.New(w.pool, w.queue, co, ledger.Config{Links: shortLinks{}})
	w.inbound = inbound.New(w.pool, w.queue, shopsSvc, w.customers, w.slots, w.ledger, inbound.Config{})

	won := w.yes(t, "SMshort", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, won.Outcome)
	require.Contains(t, won.Message, shortLinks{}.URL(won.BookingID))
	require.NotContains(t, won.Message, "pay.example", "the provider's address is not texted")
	var url string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT payment_url FROM bookings WHERE id = $1`, won.BookingID).Scan(&url))
	require.Equal(t, "https://pay.example/"+won.BookingID.String(), url, "the booking keeps the provider's page")
	again := w.yes(t, "SMshort", w.phones[0])
	require.Equal(t, won.Message, again.Message)
}
