package customers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// PauseFor is how long a customer's PAUSE by text holds.
const PauseFor = 14 * 24 * time.Hour

// Pause records a customer's PAUSE by text: no offers for PauseFor from now (a wave
// leaves them out, reason paused). A PAUSE while paused starts the time again. It
// returns the time the pause ends; ErrNotFound for an erased or unknown customer.
func (s *Service) Pause(ctx context.Context, customerID uuid.UUID) (time.Time, error) {
	until := s.cfg.Now().Add(PauseFor).UTC()
	got, err := queries.CustomerPause(ctx, s.pool, db.CustomerPauseParams{ID: customerID, Until: until})
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, ErrNotFound
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("pause customer %s: %w", customerID, err)
	}
	if got == nil {
		return until, nil
	}
	return got.UTC(), nil
}

// Resume records a customer's RESUME by text: offers again from now. wasPaused says
// whether a pause was still running; ErrNotFound for an erased or unknown customer.
func (s *Service) Resume(ctx context.Context, customerID uuid.UUID) (wasPaused bool, err error) {
	wasPaused, err = queries.CustomerResume(ctx, s.pool, db.CustomerResumeParams{ID: customerID, Now: s.cfg.Now().UTC()})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, ErrNotFound
	}
	if err != nil {
		return false, fmt.Errorf("resume customer %s: %w", customerID, err)
	}
	return wasPaused, nil
}

// Paused reports whether the customer's PAUSE holds at now.
func (c Customer) Paused(now time.Time) bool {
	return c.PausedUntil != nil && c.PausedUntil.After(now)
}
