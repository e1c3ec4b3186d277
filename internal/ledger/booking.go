package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/api"
)

// Booking statuses. ledger owns the bookings table; the claim (slots.Book) inserts a
// booking confirmed at once or pending payment, in SQL, and every later move is a
// payment transition of this package. They are the wire's words (api), spelled once.
const (
	BookingPendingPayment = api.BookingPendingPayment
	BookingConfirmed      = api.BookingConfirmed
	BookingPaymentFailed  = api.BookingPaymentFailed
	BookingCancelled      = api.BookingCancelled
)

// ErrBookingNotFound means no booking has that id.
var ErrBookingNotFound = errors.New("ledger: booking not found")

// BookingStatus returns a booking's status, or "" when there is no such booking (it was
// erased with its customer): internal/outbox asks it before sending a text meant only
// while the booking stays in one status.
func (s *Service) BookingStatus(ctx context.Context, bookingID uuid.UUID) (string, error) {
	b, err := queries.BookingGet(ctx, s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read booking %s: %w", bookingID, err)
	}
	return b.Status, nil
}
