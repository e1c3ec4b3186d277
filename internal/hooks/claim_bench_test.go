package hooks_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// claimFactsSample is what webhook_opening_facts gives a YES about to claim an offer of
// another service, in a shop with a person's openings.
const claimFactsSample = `{"opening": {"id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01", "shop_id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a02",
 "starts_at": "2026-11-28T15:00:00+00:00", "duration_minutes": 45, "service": "Any", "price_cents": 3500, "status": "open",
 "generation": 1, "version": 1, "created_at": "2026-11-27T10:00:00.123456+00:00", "updated_at": "2026-11-27T10:00:00.123456+00:00",
 "filled_at": null, "filled_by": null, "staff_id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05", "parent_id": null},
 "currency": "usd", "offers_sent": 12, "holder": {"id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03", "phone": "+15555550111", "name": "Bea"},
 "staff": {"id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05", "name": "Ana"}, "booking": null,
 "offer": {"service": "Beard trim", "duration_minutes": 45, "price_cents": 0}}`

// BenchmarkClaimData is what a claim attempt in a shop with a subscribed endpoint pays
// in Go before its statement (a shop without one pays nothing).
func BenchmarkClaimData(b *testing.B) {
	facts := []byte(claimFactsSample)
	id, now := uuid.New(), time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hooks.ClaimData(facts, id, false, now); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClaimDataBooksTheOffer: the claim's data is the opening filled by the claimant,
// with a booking of the offer's service at its price (a free one too), and the
// opening's own when the offer names none.
func TestClaimDataBooksTheOffer(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	now := time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.UTC)
	data, err := hooks.ClaimData([]byte(claimFactsSample), id, true, now)
	if err != nil {
		t.Fatal(err)
	}
	o, err := hooks.DecodeOpening(data)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "filled" || o.FilledAt == nil || !o.FilledAt.Equal(now.Truncate(time.Microsecond)) || o.FilledBy == nil || o.FilledBy.Name != "Bea" {
		t.Fatalf("not filled by the claimant at the claim: %s", data)
	}
	b := o.Booking
	if b == nil || b.ID != id || b.Status != "confirmed" || b.Service != "Beard trim" || b.AmountCents != 0 || b.PriceCents != 0 ||
		b.DurationMinutes != 45 || b.PaymentURL != nil || o.Service != "Any" || o.PriceCents != 3500 || o.OffersSent != 12 ||
		o.Staff == nil || o.Staff.Name != "Ana" || o.Currency != "usd" {
		t.Fatalf("not the booking of the offer: %s", data)
	}
	own := []byte(`{"opening": {"id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01", "duration_minutes": 45, "service": "Any", "price_cents": 3500},
		"holder": {"id": "0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03"}, "offer": {"service": null, "duration_minutes": null, "price_cents": null}}`)
	if data, err = hooks.ClaimData(own, id, false, now); err != nil {
		t.Fatal(err)
	}
	if o, err = hooks.DecodeOpening(data); err != nil {
		t.Fatal(err)
	}
	if b := o.Booking; b.Service != "Any" || b.AmountCents != 3500 || b.NetCents != 3500 || b.DurationMinutes != 45 {
		t.Fatalf("not the opening's own: %s", data)
	}
	if _, err := hooks.ClaimData([]byte(`{}`), id, false, now); err == nil {
		t.Fatal("facts without an opening rendered")
	}
}
