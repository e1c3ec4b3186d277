package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// TestAppointmentEventTypes: the appointment.* types can be subscribed to, and their
// data is an AppointmentEvent naming an appointment, with the time it held before for
// appointment.moved and only then; an endpoint subscribed to another type records none.
func TestAppointmentEventTypes(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{})
	ctx := context.Background()
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "https://hooks.example.com/in",
		EnabledEvents: []string{hooks.AppointmentCreated, hooks.AppointmentMoved}})
	require.NoError(t, err)
	for _, typ := range []string{hooks.AppointmentCreated, hooks.AppointmentCancelled, hooks.AppointmentMoved} {
		require.Contains(t, hooks.Types, typ)
		require.True(t, hooks.IsAppointmentType(typ))
		require.False(t, hooks.IsOpeningType(typ))
	}

	at := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	a := api.Appointment{ID: uuid.New(), Status: "booked", Source: "calcom", StartsAt: at, DurationMinutes: 30}
	was := &hooks.AppointmentTime{StartsAt: at.Add(48 * time.Hour), DurationMinutes: 30}
	for _, tc := range []struct {
		name string
		typ  string
		data any
		ok   bool
	}{
		{"created", hooks.AppointmentCreated, hooks.AppointmentEvent{Appointment: a}, true},
		{"cancelled, not subscribed", hooks.AppointmentCancelled, hooks.AppointmentEvent{Appointment: a}, true},
		{"moved with the time before", hooks.AppointmentMoved, hooks.AppointmentEvent{Appointment: a, Previous: was}, true},
		{"moved without it", hooks.AppointmentMoved, hooks.AppointmentEvent{Appointment: a}, false},
		{"created with a time before", hooks.AppointmentCreated, hooks.AppointmentEvent{Appointment: a, Previous: was}, false},
		{"the bare api type", hooks.AppointmentCreated, a, false},
		{"no appointment", hooks.AppointmentCreated, hooks.AppointmentEvent{}, false},
		{"another object's type", hooks.CustomerOptedIn, hooks.AppointmentEvent{Appointment: a}, false},
	} {
		err := hooks.Record(ctx, s.pool, s.shop.ID, tc.typ, at, tc.data)
		if tc.ok {
			require.NoError(t, err, tc.name)
		} else {
			require.Error(t, err, tc.name)
		}
	}
	var types []string
	var moved string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT array_agg(type ORDER BY seq),
		(SELECT subject::text FROM webhook_events WHERE type = 'appointment.moved') FROM webhook_events WHERE shop_id = $1`,
		s.shop.ID).Scan(&types, &moved))
	require.Equal(t, []string{hooks.AppointmentCreated, hooks.AppointmentMoved}, types, "only what the endpoint subscribed to")
	require.Contains(t, moved, `"previous": {"staff": null, "starts_at": "2026-12-03T11:00:00Z", "duration_minutes": 30}`)
	require.Contains(t, moved, `"starts_at": "2026-12-01T11:00:00Z"`)
}
