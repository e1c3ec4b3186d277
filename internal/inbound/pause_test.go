package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestPauseAndResume: a customer's PAUSE keeps offers away for 14 days and tells them
// until which day (the shop's local date); RESUME brings them back and says so; each
// answer is in the customer's language, and the Spanish and French words work too. A
// redelivered PAUSE is answered the same and moves nothing. A stranger's PAUSE pauses
// nobody.
func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 3)
	send := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	pausedUntil := func(phone string) *time.Time {
		t.Helper()
		c, err := w.customers.ByPhone(ctx, w.shop.ID, phone)
		require.NoError(t, err)
		return c.PausedUntil
	}

	before := time.Now()
	ans := send("SMp1", w.phones[0], "PAUSE")
	require.Equal(t, inbound.OutcomePaused, ans.Outcome)
	until := pausedUntil(w.phones[0])
	require.NotNil(t, until)
	require.WithinDuration(t, before.Add(customers.PauseFor), *until, time.Minute)
	require.Equal(t, texts.English.Paused(&w.shop, *until), ans.Message)
	require.Contains(t, ans.Message, "Ana's Salon: offers paused until "+texts.English.Date(&w.shop, *until))

	again := send("SMp1", w.phones[0], "PAUSE")
	require.Equal(t, ans.Message, again.Message, "a redelivery is answered the same")
	require.True(t, again.Replayed)
	require.Equal(t, *until, *pausedUntil(w.phones[0]), "and moves nothing")

	ans = send("SMp2", w.phones[0], "resume please")
	require.Equal(t, inbound.OutcomeResumed, ans.Outcome)
	require.Equal(t, texts.English.Resumed(&w.shop), ans.Message)
	require.Nil(t, pausedUntil(w.phones[0]))

	// Spanish words: the answer is Spanish (the words teach the customer's language).
	ans = send("SMp3", w.phones[1], "Pausa")
	require.Equal(t, inbound.OutcomePaused, ans.Outcome)
	require.Contains(t, ans.Message, "Ana's Salon: ofertas en pausa hasta el ")
	require.NotNil(t, pausedUntil(w.phones[1]))
	ans = send("SMp4", w.phones[1], "REANUDAR")
	require.Equal(t, inbound.OutcomeResumed, ans.Outcome)
	require.Equal(t, texts.In(language.Spanish).Resumed(&w.shop), ans.Message)

	// A French customer's English PAUSE is answered in French.
	c, err := w.customers.ByPhone(ctx, w.shop.ID, w.phones[2])
	require.NoError(t, err)
	fr := language.French
	_, err = w.customers.Update(ctx, w.shop.ID, c.ID, customers.Change{Language: &fr})
	require.NoError(t, err)
	ans = send("SMp5", w.phones[2], "pause")
	require.Equal(t, inbound.OutcomePaused, ans.Outcome)
	require.Contains(t, ans.Message, "Ana's Salon : offres en pause jusqu'au ")
	require.Equal(t, inbound.OutcomeResumed, send("SMp6", w.phones[2], "Reprendre").Outcome)

	// A customer who said STOP is told that START, not RESUME, brings offers back.
	require.Equal(t, inbound.OutcomeOptedOut, send("SMp7", w.phones[0], "STOP").Outcome)
	ans = send("SMp8", w.phones[0], "RESUME")
	require.Equal(t, inbound.OutcomeResumed, ans.Outcome)
	require.Equal(t, texts.English.OptedOutYes(&w.shop), ans.Message)

	// A stranger has nothing to pause: a person reads it.
	require.Equal(t, inbound.OutcomeUnrecognized, send("SMp9", "+447700955599", "PAUSE").Outcome)
}
