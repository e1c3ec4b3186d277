package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestJoiningByText: a stranger's JOIN is answered by the confirmation text alone (no
// HTTP words), and their YES joins them: a customer, opted in, with the welcome texted;
// a number that had said STOP joins with START, which clears its STOP first so the
// welcome may reach it. A YES from a number with no join request is no opt-in, and a
// customer's YES to an offer still books.
func TestJoiningByText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	rdb, prefix := redistest.New(t)
	joins := join.New(w.pool, w.queue, w.customers, join.Config{Limits: join.Limits{Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})}})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, w.ledger, inbound.Config{Joins: joins})
	send := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	queued := func(from string) int {
		t.Helper()
		var n int
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1`, from).Scan(&n))
		return n
	}
	optedIn := func(from string) bool {
		t.Helper()
		var in bool
		err := w.pool.QueryRow(ctx, `SELECT sms_opt_in FROM customers WHERE shop_id = $1 AND phone = $2`, w.shop.ID, from).Scan(&in)
		if err != nil {
			return false
		}
		return in
	}

	const kim = "+447700955501"
	ans := send("SMj1", kim, "join")
	require.Equal(t, inbound.OutcomeJoinRequested, ans.Outcome)
	require.Empty(t, ans.Message, "the confirmation text is the answer")
	require.Equal(t, 1, queued(kim), "the confirmation is texted")
	require.False(t, optedIn(kim), "nothing joins before the YES")
	ans = send("SMj2", kim, "YES")
	require.Equal(t, inbound.OutcomeOptedIn, ans.Outcome)
	require.Empty(t, ans.Message)
	require.True(t, optedIn(kim))
	require.Equal(t, 2, queued(kim), "the welcome is texted")
	again := send("SMj2", kim, "YES")
	require.Equal(t, ans.Outcome, again.Outcome, "a redelivery is answered the same")
	require.Equal(t, 2, queued(kim))

	// A stranger's YES without a request is no opt-in.
	const lou = "+447700955502"
	require.Equal(t, inbound.OutcomeNoOffer, send("SMj3", lou, "YES").Outcome)
	require.False(t, optedIn(lou))

	// STOP, then JOIN, then START: the STOP is cleared and the number joins.
	const max = "+447700955503"
	stopped := func() int {
		t.Helper()
		var n int
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM sms_suppressions WHERE shop_id = $1`, w.shop.ID).Scan(&n))
		return n
	}
	require.Equal(t, inbound.OutcomeOptedOut, send("SMj4", max, "STOP").Outcome)
	require.Equal(t, 1, stopped(), "the STOP is kept")
	require.Equal(t, inbound.OutcomeJoinRequested, send("SMj5", max, "JOIN").Outcome)
	require.Equal(t, inbound.OutcomeOptedIn, send("SMj6", max, "START").Outcome)
	require.True(t, optedIn(max))
	require.Zero(t, stopped(), "START cleared the number's STOP")

	// A customer's STOP, in their own words, is kept in the consent record once, however
	// often the text is handled.
	ans = send("SMj8", kim, "Please stop texting me, thanks")
	require.Equal(t, inbound.OutcomeOptedOut, ans.Outcome)
	c, err := w.customers.ByPhone(ctx, w.shop.ID, kim)
	require.NoError(t, err)
	require.NoError(t, joins.RecordOptOut(ctx, w.shop, c.ID, "", "Please stop texting me, thanks", "SMj8", time.Now()), "handled again")
	hist, err := joins.History(ctx, w.shop.ID, c.ID)
	require.NoError(t, err)
	var kinds []string
	for _, e := range hist {
		kinds = append(kinds, e.Kind+"/"+e.Method)
	}
	require.Equal(t, []string{"opt_in/keyword", "opt_out/reply"}, kinds, "the join, then the STOP, once")
	require.Equal(t, "Please stop texting me, thanks", hist[1].RevocationText)

	// A customer's YES to their offer still books.
	require.Equal(t, inbound.OutcomeBooked, w.yes(t, "SMj7", w.phones[0]).Outcome)
}

// TestStartFromAStranger: START from a number the shop has never had (no customer, no
// STOP on record, no join request) asks to join as JOIN does: the confirmation is
// texted in the shop's language, nothing joins before its YES, and the YES joins with
// the consent on record (method keyword). START from a number that said STOP keeps
// clearing the STOP, and a customer's START opts them in, as before, and is on the
// consent record in their words.
func TestStartFromAStranger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	rdb, prefix := redistest.New(t)
	joins := join.New(w.pool, w.queue, w.customers, join.Config{Limits: join.Limits{Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})}})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, w.ledger, inbound.Config{Joins: joins})
	send := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	texted := func(to string) []string {
		t.Helper()
		rows, err := w.pool.Query(ctx, `SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1 ORDER BY id`, to)
		require.NoError(t, err)
		bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return bodies
	}

	const ana = "+447700955601"
	ans := send("SMs1", ana, "START")
	require.Equal(t, inbound.OutcomeJoinRequested, ans.Outcome)
	require.Empty(t, ans.Message, "the confirmation text is the answer")
	require.Equal(t, []string{joins.Confirmation(w.shop)}, texted(ana))
	_, err := w.customers.ByPhone(ctx, w.shop.ID, ana)
	require.Error(t, err, "nothing joins before the YES")
	require.Equal(t, inbound.OutcomeJoinRequested, send("SMs1", ana, "START").Outcome, "a redelivery is answered the same")
	require.Len(t, texted(ana), 1, "and texts nothing more")

	require.Equal(t, inbound.OutcomeOptedIn, send("SMs2", ana, "YES").Outcome)
	c, err := w.customers.ByPhone(ctx, w.shop.ID, ana)
	require.NoError(t, err)
	require.True(t, c.SMSOptIn)
	hist, err := joins.History(ctx, w.shop.ID, c.ID)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	require.Equal(t, join.KindOptIn+"/"+join.MethodKeyword, hist[0].Kind+"/"+hist[0].Method)
	require.Equal(t, "YES", hist[0].Confirmation.Body)

	// A Spanish shop's stranger gets the Spanish confirmation.
	es := language.Spanish
	shop, err := w.shops.Update(ctx, w.shop.ID, shops.ShopChange{Language: &es})
	require.NoError(t, err)
	const bea = "+447700955602"
	require.Equal(t, inbound.OutcomeJoinRequested, send("SMs3", bea, "start").Outcome)
	require.Equal(t, []string{joins.Confirmation(shop)}, texted(bea))
	require.NotEqual(t, joins.Confirmation(w.shop), joins.Confirmation(shop))

	// A number that said STOP: its START clears the STOP, and asks nothing.
	const cal = "+447700955603"
	require.Equal(t, inbound.OutcomeOptedOut, send("SMs4", cal, "STOP").Outcome)
	before := len(texted(cal))
	require.Equal(t, inbound.OutcomeOptedIn, send("SMs5", cal, "START").Outcome)
	require.Len(t, texted(cal), before, "no confirmation")
	stopped, err := w.customers.OptedOut(ctx, w.shop.ID, cal)
	require.NoError(t, err)
	require.False(t, stopped, "the STOP is cleared")

	// A customer's STOP and START, in their own words, are on the consent record, once
	// however often each text is handled; the START opts them in, as before.
	require.Equal(t, inbound.OutcomeOptedOut, send("SMs6", w.phones[0], "STOP").Outcome)
	require.Equal(t, inbound.OutcomeOptedIn, send("SMs7", w.phones[0], "Start").Outcome)
	require.Equal(t, inbound.OutcomeOptedIn, send("SMs7", w.phones[0], "Start").Outcome)
	c, err = w.customers.ByPhone(ctx, w.shop.ID, w.phones[0])
	require.NoError(t, err)
	require.True(t, c.SMSOptIn)
	require.Nil(t, c.OptedOutAt)
	require.NoError(t, joins.RecordOptIn(ctx, w.shop, c.ID, "", "Start", "SMs7", time.Now()), "handled again")
	hist, err = joins.History(ctx, w.shop.ID, c.ID)
	require.NoError(t, err)
	require.Len(t, hist, 2)
	require.Equal(t, join.KindOptOut+"/"+join.MethodReply, hist[0].Kind+"/"+hist[0].Method)
	require.Equal(t, join.KindOptIn+"/"+join.MethodReply, hist[1].Kind+"/"+hist[1].Method)
	require.Equal(t, "Start", hist[1].Confirmation.Body)
	require.Equal(t, "SMs7", hist[1].Confirmation.MessageSID)
	require.False(t, hist[1].AssertedByOwner)
}

// TestShopsOwnJoinKeyword: a shop's own join keyword asks to join as JOIN does (the
// confirmation in the shop's language), the defaults still do, and another shop's word
// is nothing special.
func TestShopsOwnJoinKeyword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 0)
	rdb, prefix := redistest.New(t)
	joins := join.New(w.pool, w.queue, w.customers, join.Config{Limits: join.Limits{Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})}})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, w.ledger, inbound.Config{Joins: joins})
	send := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	require.Equal(t, inbound.OutcomeUnrecognized, send("SMk0", "+447700955700", "CORTES").Outcome, "not a keyword yet")

	words, fr := []string{"cortes"}, language.French
	shop, err := w.shops.Update(ctx, w.shop.ID, shops.ShopChange{JoinKeywords: &words, Language: &fr})
	require.NoError(t, err)
	require.Equal(t, []string{"CORTES"}, shop.JoinKeywords)
	require.Equal(t, inbound.OutcomeJoinRequested, send("SMk1", "+447700955701", "Cortes!").Outcome)
	var body string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1`, "+447700955701").Scan(&body))
	require.Equal(t, joins.Confirmation(shop), body, "in the shop's language")
	require.Equal(t, inbound.OutcomeJoinRequested, send("SMk2", "+447700955702", "JOIN").Outcome, "the defaults still work")
}
