package shops

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// calendarTokenPrefix marks calendar feed tokens, as keyPrefix marks API keys.
const calendarTokenPrefix = "cal_"

// ErrCalendarNotFound means no shop has that calendar token (never made, or rotated
// away). The feed answers it with a plain 404: a guess learns nothing.
var ErrCalendarNotFound = problem.New(problem.NotFound, "not_found", "no such resource")

// newCalendarToken makes a feed token (cal_ and the hex of 32 random bytes) and the
// SHA-256 by which the shop is found from it.
func newCalendarToken() (token string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("make calendar token: %w", err)
	}
	token = calendarTokenPrefix + hex.EncodeToString(b)
	return token, hashCalendarToken(token), nil
}

func hashCalendarToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// ByCalendarToken finds the shop whose calendar feed token is token. It reads Postgres on
// every call (no cache), so a rotated token fails from the rotation's commit on, on every
// instance. The lookup is by the token's hash, so its timing tells nothing of the token.
func (s *Service) ByCalendarToken(ctx context.Context, token string) (Shop, error) {
	if !strings.HasPrefix(token, calendarTokenPrefix) || len(token) > 100 {
		return Shop{}, ErrCalendarNotFound
	}
	hash := hashCalendarToken(token)
	row, err := queries.ShopGetByCalendarTokenHash(ctx, s.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrCalendarNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("find shop by calendar token: %w", err)
	}
	if subtle.ConstantTimeCompare(row.CalendarTokenHash, hash) != 1 {
		return Shop{}, ErrCalendarNotFound
	}
	return s.fromRow(row)
}

// RotateCalendarToken gives the shop a new calendar feed address; the old one stops
// working when this returns, on every instance (ByCalendarToken reads Postgres).
func (s *Service) RotateCalendarToken(ctx context.Context, id uuid.UUID) (Shop, error) {
	token, hash, err := newCalendarToken()
	if err != nil {
		return Shop{}, err
	}
	row, err := queries.ShopRotateCalendarToken(ctx, s.pool, db.ShopRotateCalendarTokenParams{ID: id, CalendarToken: token, CalendarTokenHash: hash})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrShopNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("rotate calendar token of shop %s: %w", id, err)
	}
	return s.fromRow(row)
}
