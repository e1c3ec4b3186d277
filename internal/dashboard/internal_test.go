package dashboard

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

func TestWeekAndMonthStartInTheShopsZone(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	// Sunday 1 Nov 2026, the day summer time ends in New York.
	sun := time.Date(2026, 11, 1, 23, 0, 0, 0, ny)
	assert.Equal(t, time.Date(2026, 10, 26, 0, 0, 0, 0, ny), weekStart(sun))
	assert.Equal(t, time.Date(2026, 11, 2, 0, 0, 0, 0, ny), weekStart(sun.Add(2*time.Hour)))
	assert.Equal(t, time.Date(2026, 11, 16, 0, 0, 0, 0, ny), weekStart(time.Date(2026, 11, 16, 0, 0, 0, 0, ny)))
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, ny), monthStart(sun))
	assert.Equal(t, "26 Oct – 1 Nov", formatRange(time.Date(2026, 10, 26, 0, 0, 0, 0, ny), sun))
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "under 1 min", formatDuration(20*time.Second))
	assert.Equal(t, "12 min", formatDuration(12*time.Minute+30*time.Second))
	assert.Equal(t, "3 h 5 min", formatDuration(3*time.Hour+5*time.Minute))
	assert.Equal(t, "2.5 days", formatDuration(60*time.Hour))
}

func TestFriendly(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "The start must be in the future.", friendly(problem.Invalidf("starts_at", "starts_at must be in the future"), "usd"))
	assert.Equal(t, "The length in minutes must be between 1 and 1440.",
		friendly(problem.Invalidf("duration_minutes", "duration_minutes must be between 1 and 1440"), "usd"))
	assert.Equal(t, "Enter a price above zero and at most €999,999.99.",
		friendly(problem.Invalidf("price_cents", "price_cents must be positive"), "eur"))
}

func TestSessionCookieRoundTripAndTampering(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	d := &Dashboard{cfg: Config{SessionSecret: []byte("0123456789abcdef0123456789abcdef"), SessionTTL: time.Hour,
		Now: func() time.Time { return now }}}
	s, err := d.newSession(uuid.New(), 3)
	require.NoError(t, err)
	v := d.encodeSession(s)

	got, ok := d.decodeSession(v, now)
	require.True(t, ok)
	assert.Equal(t, s.ShopID, got.ShopID)
	assert.Equal(t, s.ID, got.ID)
	assert.Equal(t, 3, got.KeyVersion)
	assert.True(t, s.Expires.Equal(got.Expires))

	// A well-signed cookie of the format before key versions is refused: it cannot show
	// which key it was signed in under.
	old := strings.Join([]string{"1", s.ShopID.String(), strconv.FormatInt(s.Expires.Unix(), 10), s.ID}, ".")
	old += "." + base64.RawURLEncoding.EncodeToString(d.mac("session", old))
	_, ok = d.decodeSession(old, now)
	assert.False(t, ok, "a format-1 cookie is refused")
	for _, version := range []string{"0", "-1", "x", ""} {
		bad := strings.Join([]string{"2", s.ShopID.String(), strconv.FormatInt(s.Expires.Unix(), 10), s.ID, version}, ".")
		bad += "." + base64.RawURLEncoding.EncodeToString(d.mac("session", bad))
		_, ok = d.decodeSession(bad, now)
		assert.False(t, ok, "key version %q is refused", version)
	}

	_, ok = d.decodeSession(v, now.Add(time.Hour))
	assert.False(t, ok, "expired at its expiry")
	for i := range v {
		flipped := []byte(v)
		flipped[i] ^= 1
		_, ok := d.decodeSession(string(flipped), now)
		assert.False(t, ok, "a changed byte at %d is refused", i)
	}

	other := &Dashboard{cfg: Config{SessionSecret: []byte("fedcba9876543210fedcba9876543210")}}
	_, ok = other.decodeSession(v, now)
	assert.False(t, ok, "another secret refuses it")

	assert.NotEqual(t, d.csrfToken(s), other.csrfToken(s))
	s2, err := d.newSession(s.ShopID, 3)
	require.NoError(t, err)
	assert.NotEqual(t, d.csrfToken(s), d.csrfToken(s2), "each sign-in gets its own CSRF token")
	assert.NotEqual(t, d.loginToken(s.ID), d.csrfToken(s), "purposes keep MACs apart")
}
