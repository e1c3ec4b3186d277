package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestBookShowsChains: the Book page of any day a chain has a time on shows the chain
// as it filled, "Mon 30 Nov 09:00 Kim (from Wed 2 Dec 16:00) → Wed 2 Dec 16:00 Lou
// (from Thu 3 Dec 10:00) → Thu 3 Dec 10:00 Ana", with its moves and what it recovered
// (issue 44); a day without one shows no chain card.
func TestBookShowsChains(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	shop := en.shopA
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	at := func(month time.Month, day, hour int) time.Time { return time.Date(2026, month, day, hour, 0, 0, 0, ny) }
	mover := func(source connectors.Source, phone, name string, start time.Time) (uuid.UUID, uuid.UUID) {
		t.Helper()
		c := en.addCustomer(t, shop, phone, name)
		_, err := en.pool.Exec(ctx, `UPDATE customers SET move_up = true WHERE id = $1`, c.ID)
		require.NoError(t, err)
		res, err := en.book.Upsert(ctx, shop, connectors.Appointment{Source: source, ExternalID: "ext-" + name,
			Status: connectors.StatusBooked, StartsAt: start, DurationMinutes: 45, Service: "Cut", PriceCents: 2500, Phone: phone})
		require.NoError(t, err)
		return c.ID, res.Appointment.ID
	}
	offer := func(opening, customer, moveFrom uuid.UUID) slots.LiveOffer {
		t.Helper()
		var id uuid.UUID
		require.NoError(t, en.pool.QueryRow(ctx, `
			INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at, move_from)
			SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp(), $3 FROM slot_openings WHERE id = $1
			RETURNING id`, opening, customer, uuid.NullUUID{UUID: moveFrom, Valid: moveFrom != uuid.Nil}).Scan(&id))
		c, err := en.slots.Claimable(ctx, &shop, customer)
		require.NoError(t, err)
		for _, o := range c.Live {
			if o.OfferID == id {
				return o
			}
		}
		t.Fatalf("offer %s not claimable", id)
		return slots.LiveOffer{}
	}
	kim, kimAppt := mover(connectors.SourceCalcom, "+15555550401", "Kim", at(12, 2, 16))
	lou, louAppt := mover(connectors.SourceAPI, "+15555550402", "Lou", at(12, 3, 10))
	ana := en.addCustomer(t, shop, "+15555550403", "Ana")
	first, err := en.slots.Declare(ctx, shop, slots.NewOpening{StartsAt: at(11, 30, 9), DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	m, err := en.book.MoveUp(ctx, shop, kim, offer(first.ID, kim, kimAppt))
	require.NoError(t, err)
	m, err = en.book.MoveUp(ctx, shop, lou, offer(m.Declaration.OpeningID, lou, louAppt))
	require.NoError(t, err)
	// Ana from the waitlist: the claim a YES makes (this env has no Redis lock).
	plain := offer(m.Declaration.OpeningID, ana.ID, uuid.Nil)
	var b slots.Claim
	require.NoError(t, pgx.BeginFunc(ctx, en.pool, func(tx pgx.Tx) (err error) {
		b, err = en.slots.ClaimTx(ctx, tx, shop, ana.ID, plain)
		return err
	}))
	require.Equal(t, slots.Booked, b.Outcome)

	ck := en.login(t, en.keyA)
	want := "Mon 30 Nov 09:00 Kim (from Wed 2 Dec 16:00) → Wed 2 Dec 16:00 Lou (from Thu 3 Dec 10:00) → Thu 3 Dec 10:00 Ana"
	chain := regexp.MustCompile(`(?s)<li class="chain">(.*?)<br>`)
	for _, day := range []string{"2026-11-30", "2026-12-02", "2026-12-03"} {
		body, _ := en.page(t, ck, dashboard.BookPath+"?day="+day)
		got := chain.FindStringSubmatch(body)
		require.NotNil(t, got, "no chain on the page of %s", day)
		require.Equal(t, want, html.UnescapeString(got[1]), day)
		require.Contains(t, body, "2 moves, $75.00 recovered")
	}
	body, csrf := en.page(t, ck, dashboard.BookPath+"?day=2026-12-01")
	require.False(t, strings.Contains(body, `id="chains"`), "no chain has a time on 1 Dec")

	// Kim's move is to copy into cal.com, whatever the day shown; Lou's appointment
	// came through the API, which reads the move from the book.
	moves := regexp.MustCompile(`(?s)<li id="move-([0-9a-f-]{36})">(.*?) <form`).FindAllStringSubmatch(body, -1)
	require.Len(t, moves, 1, "moves to copy")
	require.Equal(t, kimAppt.String(), moves[0][1])
	require.Equal(t, "Kim, Cut: Wed 2 Dec 16:00 → Mon 30 Nov 09:00 (in cal.com)", html.UnescapeString(moves[0][2]))
	rec := en.post(dashboard.BookPath+"/"+kimAppt.String()+"/copied", url.Values{"csrf": {csrf}, "day": {"2026-12-01"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, dashboard.BookPath+"?day=2026-12-01&notice=copied", rec.Header().Get("Location"))
	body, _ = en.page(t, ck, dashboard.BookPath+"?day=2026-12-01")
	require.NotContains(t, body, `id="moves-to-copy"`, "copied: off the list")
	rec = en.post(dashboard.BookPath+"/"+kimAppt.String()+"/copied", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, dashboard.BookPath+"?notice=copied_already", rec.Header().Get("Location"))
	// Another shop's owner cannot take it off anyone's list.
	other := en.login(t, en.keyB)
	_, csrfB := en.page(t, other, dashboard.BookPath)
	rec = en.post(dashboard.BookPath+"/"+louAppt.String()+"/copied", url.Values{"csrf": {csrfB}}, other)
	require.Equal(t, dashboard.BookPath+"?notice=copied_already", rec.Header().Get("Location"))
}
