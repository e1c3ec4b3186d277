package book_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// TestSnapshotReadsGoneEventsAsCancelled: a feed's event missing from the next poll is
// cancelled (and declares its opening), within the feed's window only; what did not
// change changes nothing; an empty feed changes nothing at all.
func TestSnapshotReadsGoneEventsAsCancelled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	base := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	event := func(uid string, days int) connectors.Appointment {
		a := appt(uid, 0, connectors.StatusBooked)
		a.Source, a.StartsAt, a.UpdatedAt = connectors.SourceICS, base.AddDate(0, 0, days), time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
		return a
	}
	first := []connectors.Appointment{event("a", 0), event("b", 1), event("c", 2), event("far", 30)}
	res, err := f.book.Snapshot(ctx, f.shop, connectors.SourceICS, first, time.Now())
	require.NoError(t, err)
	require.Equal(t, 4, res.Changed)
	require.Zero(t, res.Gone)

	// The next poll: b deleted; far beyond this poll's window (a feed of two weeks).
	res, err = f.book.Snapshot(ctx, f.shop, connectors.SourceICS, []connectors.Appointment{event("a", 0), event("c", 2)}, time.Now())
	require.NoError(t, err)
	require.Zero(t, res.Changed, "unchanged events change nothing")
	require.Equal(t, 1, res.Gone)
	require.Len(t, res.Declarations, 1)
	require.Equal(t, book.DeclarationDeclared, res.Declarations[0].State)

	for uid, want := range map[string]connectors.Status{"a": connectors.StatusBooked, "b": connectors.StatusCancelled,
		"c": connectors.StatusBooked, "far": connectors.StatusBooked} {
		a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceICS, uid)
		require.NoError(t, err)
		require.Equal(t, want, a.Status, uid)
	}
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.True(t, ops[0].StartsAt.Equal(base.AddDate(0, 0, 1)))

	// Polled again: b stays gone, nothing is declared twice.
	res, err = f.book.Snapshot(ctx, f.shop, connectors.SourceICS, []connectors.Appointment{event("a", 0), event("c", 2)}, time.Now())
	require.NoError(t, err)
	require.Zero(t, res.Gone)
	require.Len(t, f.openingsOf(t), 1)

	_, err = f.book.Snapshot(ctx, f.shop, connectors.SourceICS, nil, time.Now())
	require.ErrorIs(t, err, book.ErrEmptySnapshot)
	_, err = f.book.Snapshot(ctx, f.shop, connectors.SourceICS, []connectors.Appointment{appt("sq", 1, connectors.StatusBooked)}, time.Now())
	p, ok := problem.As(err)
	require.True(t, ok)
	require.Equal(t, problem.Invalid, p.Kind)
}
