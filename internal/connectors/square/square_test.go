package square_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
)

// Square's published test vector (square/square-go-sdk,
// webhooks/client/verify_signature_test.go): a body, the subscription's signature key,
// its notification URL and the signature Square computed for them.
const (
	vectorBody = `{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}`
	vectorKey  = "Ibxx_5AKakO-3qeNVR61Dw"
	vectorURL  = "https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9"
	vectorSig  = "GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4="
)

func TestVerify(t *testing.T) {
	t.Parallel()
	require.Equal(t, vectorSig, square.Sign(vectorKey, vectorURL, []byte(vectorBody)))
	cases := []struct {
		name, key, url, body, sig string
		ok                        bool
	}{
		{"Square's vector", vectorKey, vectorURL, vectorBody, vectorSig, true},
		// The same file's other two valid vectors: characters JSON encoders escape.
		{"unescaped characters", "signature-key", "https://webhook.site/webhooks",
			`{"data":{"type":"webhooks","id":"fake_id"}}`, "W3FlCNk5IA3ZQ2LHTWoajvzfaDu/OwY2tNHIHC3IUOA=", true},
		{"escaped characters", "signature-key", "https://webhook.site/webhooks",
			`{"data":{"type":"webhooks","id":">id<"}}`, "Cxt7+aTi4rKgcA0bC4g9EHdVtLSDWdqccmL5MvihU4U=", true},
		{"another notification URL", vectorKey, "https://webhook.site/79a4f3a-dcfa-49ee-bac5-9d0edad886b9", vectorBody, vectorSig, false},
		{"another key", "MCmhFRxGX82xMwg5FsaoQA", vectorURL, vectorBody, vectorSig, false},
		{"a short signature", vectorKey, vectorURL, vectorBody, "1z2n3DEJJiUPKcPzQo1ftvbxGdw=", false},
		{"another body", vectorKey, vectorURL, strings.Replace(vectorBody, "2022-07-13", "2022-06-13", 1), vectorSig, false},
		{"the body reformatted", vectorKey, vectorURL, strings.ReplaceAll(vectorBody, ",", ", "), vectorSig, false},
		{"no key", "", vectorURL, vectorBody, vectorSig, false},
		{"no URL", vectorKey, "", vectorBody, vectorSig, false},
		{"no signature", vectorKey, vectorURL, vectorBody, "", false},
		{"not base64", vectorKey, vectorURL, vectorBody, "!!" + vectorSig[2:], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := square.Verify(c.key, c.url, []byte(c.body), c.sig)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, connectors.ErrSignature)
			}
		})
	}
}

const (
	key = "sq-test-signature-key"
	url = "https://slots.example.test/webhooks/square/5f0c6a4e-8d2b-4c1e-9a7f-3b6d2e1c0a9f"
)

func load(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestReadVerifiesBeforeReading(t *testing.T) {
	t.Parallel()
	body := load(t, "booking_created.json")
	_, err := square.Read(key, url, body, square.Sign(key, url+"?", body))
	require.ErrorIs(t, err, connectors.ErrSignature)
	_, err = square.Read(key, url, []byte("{"), square.Sign(key, url, []byte("{")))
	require.ErrorIs(t, err, connectors.ErrPayload)
}

func TestParse(t *testing.T) {
	t.Parallel()
	booked := connectors.Appointment{
		Source: connectors.SourceSquare, ExternalID: "z4r1xkq9b2m7np", Status: connectors.StatusBooked,
		StartsAt: at("2026-12-02T17:30:00Z"), DurationMinutes: 45, ExternalStaff: "TMq3Zx7Vb2Nm8Lk",
		Version: 0, UpdatedAt: at("2026-11-29T09:20:10Z"),
	}
	moved := booked
	moved.StartsAt, moved.Version, moved.UpdatedAt = at("2026-12-02T18:00:00Z"), 1, at("2026-11-30T10:02:40Z")
	cancelled := moved
	cancelled.Status, cancelled.Version, cancelled.UpdatedAt = connectors.StatusCancelled, 2, at("2026-11-30T16:45:01Z")
	cases := []struct {
		file string
		want connectors.Delivery
	}{
		{"booking_created.json", connectors.Delivery{ID: "8f2c5a1e-3b7d-4a0e-9c4f-2d1b6e7a9f30", Event: "booking.created",
			Appointments: []connectors.Appointment{booked}}},
		{"booking_updated_moved.json", connectors.Delivery{ID: "4b3a2c1d-0e9f-4a8b-b7c6-d5e4f3a2b1c0", Event: "booking.updated",
			Appointments: []connectors.Appointment{moved}}},
		{"booking_updated_cancelled.json", connectors.Delivery{ID: "c1d9e0f2-6a4b-4e3c-8b7a-5f2e1d0c9b8a", Event: "booking.updated",
			Appointments: []connectors.Appointment{cancelled}}},
		{"payment_updated.json", connectors.Delivery{ID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", Event: "payment.updated"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			body := load(t, c.file)
			got, err := square.Read(key, url, body, square.Sign(key, url, body))
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseStatuses(t *testing.T) {
	t.Parallel()
	for sq, want := range map[string]connectors.Status{
		"PENDING": connectors.StatusBooked, "ACCEPTED": connectors.StatusBooked,
		"CANCELLED_BY_CUSTOMER": connectors.StatusCancelled, "CANCELLED_BY_SELLER": connectors.StatusCancelled,
		"DECLINED": connectors.StatusCancelled, "NO_SHOW": connectors.StatusNoShow,
	} {
		body := strings.Replace(string(load(t, "booking_created.json")), `"ACCEPTED"`, `"`+sq+`"`, 1)
		d, err := square.Parse([]byte(body))
		require.NoError(t, err, sq)
		require.Equal(t, want, d.Appointments[0].Status, sq)
	}
	body := strings.Replace(string(load(t, "booking_created.json")), `"ACCEPTED"`, `"TELEPORTED"`, 1)
	_, err := square.Parse([]byte(body))
	require.ErrorIs(t, err, connectors.ErrPayload, "an unknown status is not guessed")
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	created := string(load(t, "booking_created.json"))
	for name, body := range map[string]string{
		"not json":      `<xml/>`,
		"no event id":   strings.Replace(created, `"event_id"`, `"x_event_id"`, 1),
		"no booking":    `{"type":"booking.updated","event_id":"e","data":{"type":"booking","id":"b","object":{}}}`,
		"no start":      strings.Replace(created, `"start_at"`, `"x_start_at"`, 1),
		"no segments":   strings.Replace(created, `"appointment_segments"`, `"x_segments"`, 1),
		"a day and one": strings.Replace(created, `"duration_minutes": 30`, `"duration_minutes": 1430`, 1),
	} {
		_, err := square.Parse([]byte(body))
		require.ErrorIs(t, err, connectors.ErrPayload, name)
	}
}

// FuzzParse: whatever the body, Parse never panics, and what it reads is an
// appointment the book can take.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"booking_created.json", "booking_updated_moved.json", "booking_updated_cancelled.json", "payment_updated.json"} {
		f.Add(load(f, name))
	}
	f.Add([]byte(`{"type":"booking.updated","event_id":"e","data":{"object":{"booking":{"id":"b","status":"ACCEPTED","start_at":"2026-12-02T17:30:00Z","updated_at":"x","version":-1,"appointment_segments":[{"duration_minutes":-30}]}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := square.Parse(body)
		if err != nil {
			require.ErrorIs(t, err, connectors.ErrPayload)
			return
		}
		require.NotEmpty(t, d.ID)
		for _, a := range d.Appointments {
			require.Equal(t, connectors.SourceSquare, a.Source)
			require.NotEmpty(t, strings.TrimSpace(a.ExternalID))
			require.True(t, a.Status.Valid())
			require.False(t, a.StartsAt.IsZero())
			require.False(t, a.UpdatedAt.IsZero())
			require.GreaterOrEqual(t, a.Version, int64(0))
			require.True(t, a.DurationMinutes >= 1 && a.DurationMinutes <= 1440, "%d minutes", a.DurationMinutes)
		}
	})
}
