package calcom_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
)

const secret = "cal-test-secret"

func load(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// TestVerify: a vector computed apart (openssl dgst -sha256 -hmac), and what is refused.
func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"triggerEvent":"PING","createdAt":"2026-11-29T09:00:00.000Z","payload":{}}`)
	const vector = "97787ade8529854e4ecdb11fa4c56e4f7d5e9039aa6489082277788ae69862a5"
	require.Equal(t, vector, calcom.Sign(secret, body))
	cases := []struct {
		name, secret, sig string
		body              []byte
		ok                bool
	}{
		{"the vector", secret, vector, body, true},
		{"upper-case hex", secret, strings.ToUpper(vector), body, true},
		{"another secret", "other", vector, body, false},
		{"a changed body", secret, vector, append([]byte(" "), body...), false},
		{"no signature", secret, "", body, false},
		{"cal.com without a secret", secret, "no-secret-provided", body, false},
		{"no secret of ours", "", calcom.Sign("", body), body, false},
		{"not hex", secret, "zz" + vector[2:], body, false},
		{"truncated", secret, vector[:32], body, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := calcom.Verify(c.secret, c.body, c.sig)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, connectors.ErrSignature)
			}
		})
	}
}

func TestReadVerifiesBeforeReading(t *testing.T) {
	t.Parallel()
	_, err := calcom.Read(secret, []byte("not json at all"), calcom.Sign("wrong", []byte("not json at all")))
	require.ErrorIs(t, err, connectors.ErrSignature, "a bad signature is refused before the body is read")
	_, err = calcom.Read(secret, []byte("not json at all"), calcom.Sign(secret, []byte("not json at all")))
	require.ErrorIs(t, err, connectors.ErrPayload)
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParse(t *testing.T) {
	t.Parallel()
	kim := connectors.Appointment{
		Source: connectors.SourceCalcom, ExternalID: "bFJeNb2uX8ANpT3JL5EfXw", Status: connectors.StatusBooked,
		StartsAt: at("2026-12-01T15:00:00Z"), DurationMinutes: 45, Service: "Haircut", Phone: "+15555550123",
		CustomerName: "Kim Lee", ExternalStaff: "dana@example-barbers.test", PriceCents: 2500,
		UpdatedAt: at("2026-11-29T09:12:44.512Z"),
	}
	cancelled := kim
	cancelled.Status, cancelled.Phone, cancelled.UpdatedAt = connectors.StatusCancelled, "(555) 555-0123", at("2026-11-30T18:02:10.004Z")
	moved := kim
	moved.Status, moved.UpdatedAt = connectors.StatusMoved, at("2026-11-30T08:30:00Z")
	rebooked := moved
	rebooked.ExternalID, rebooked.Status, rebooked.StartsAt = "qW3rTy7UiOp9AsDfGhJkLz", connectors.StatusBooked, at("2026-12-03T16:00:00Z")
	rebooked.Replaces = "bFJeNb2uX8ANpT3JL5EfXw" // the new booking names the one it takes the place of

	cases := []struct {
		file string
		want connectors.Delivery
	}{
		{"booking_created.json", connectors.Delivery{ID: "BOOKING_CREATED:bFJeNb2uX8ANpT3JL5EfXw", Event: "BOOKING_CREATED",
			Appointments: []connectors.Appointment{kim}}},
		{"booking_cancelled.json", connectors.Delivery{ID: "BOOKING_CANCELLED:bFJeNb2uX8ANpT3JL5EfXw", Event: "BOOKING_CANCELLED",
			Appointments: []connectors.Appointment{cancelled}}},
		{"booking_rescheduled.json", connectors.Delivery{ID: "BOOKING_RESCHEDULED:qW3rTy7UiOp9AsDfGhJkLz", Event: "BOOKING_RESCHEDULED",
			Appointments: []connectors.Appointment{rebooked, moved}}},
		{"booking_requested.json", connectors.Delivery{ID: "BOOKING_REQUESTED:bFJeNb2uX8ANpT3JL5EfXw", Event: "BOOKING_REQUESTED"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			body := load(t, c.file)
			got, err := calcom.Read(secret, body, calcom.Sign(secret, body))
			require.NoError(t, err)
			for i := range got.Appointments {
				got.Appointments[i].StartsAt = got.Appointments[i].StartsAt.UTC()
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":         `<xml/>`,
		"no trigger":       `{"payload":{"uid":"x"}}`,
		"no uid":           `{"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-29T09:00:00Z","payload":{"startTime":"2026-12-01T15:00:00Z","length":30}}`,
		"no start":         `{"triggerEvent":"BOOKING_CANCELLED","createdAt":"2026-11-29T09:00:00Z","payload":{"uid":"x","length":30}}`,
		"no length":        `{"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-29T09:00:00Z","payload":{"uid":"x","startTime":"2026-12-01T15:00:00Z"}}`,
		"no delivery time": `{"triggerEvent":"BOOKING_CREATED","payload":{"uid":"x","startTime":"2026-12-01T15:00:00Z","length":30}}`,
	} {
		_, err := calcom.Parse([]byte(body))
		require.True(t, errors.Is(err, connectors.ErrPayload), "%s: %v", name, err)
	}
}

// FuzzParse: whatever the body, Parse never panics, and what it reads is an
// appointment the book can take.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"booking_created.json", "booking_cancelled.json", "booking_rescheduled.json", "booking_requested.json"} {
		f.Add(load(f, name))
	}
	f.Add([]byte(`{"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-29T09:00:00Z","payload":{"uid":"x","startTime":"2026-12-01T15:00:00Z","endTime":"2026-12-01T14:00:00Z","length":-5}}`))
	f.Add([]byte(`{"triggerEvent":"BOOKING_RESCHEDULED","createdAt":"2026-11-29T09:00:00Z","payload":{"uid":"x","startTime":"2026-12-01T15:00:00Z","length":30,"rescheduleUid":"y","rescheduleStartTime":"bad"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := calcom.Parse(body)
		if err != nil {
			require.ErrorIs(t, err, connectors.ErrPayload)
			return
		}
		require.NotEmpty(t, d.Event)
		for _, a := range d.Appointments {
			require.Equal(t, connectors.SourceCalcom, a.Source)
			require.NotEmpty(t, strings.TrimSpace(a.ExternalID))
			require.True(t, a.Status.Valid())
			require.False(t, a.StartsAt.IsZero())
			require.False(t, a.UpdatedAt.IsZero())
			require.True(t, a.DurationMinutes >= 1 && a.DurationMinutes <= 1440, "%d minutes", a.DurationMinutes)
		}
	})
}
