package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// Attendance is what the owner says of a booking once its time has come (issue 47): the
// customer came, or did not. It feeds the customer's stats, the reliable ranking and
// skip_after_no_shows.
type Attendance string

// The attendances; AttendanceNone takes a mark back.
const (
	AttendanceAttended Attendance = "attended"
	AttendanceNoShow   Attendance = "no_show"
	AttendanceNone     Attendance = ""
)

// UndoAttendanceWithin is how long after a mark the owner may take it back or change it.
const UndoAttendanceWithin = 24 * time.Hour

// Errors of MarkAttendance.
var (
	ErrAttendanceTooEarly = problem.New(problem.Conflict, "too_early",
		"the booking's time has not come yet: mark whether the customer came once it has started")
	ErrAttendanceNotBooked = problem.New(problem.Conflict, "not_booked",
		"the booking was cancelled or its payment failed: there is nothing to attend")
	ErrAttendanceTooLate = problem.New(problem.Conflict, "attendance_final",
		"the booking was marked more than 24 hours ago: the mark stands")
)

// AttendanceMark is a booking's attendance as marked.
type AttendanceMark struct {
	BookingID uuid.UUID
	// Attendance is "" when unmarked; At when it was marked.
	Attendance Attendance
	At         *time.Time
	// Fee is the booking's fee (issue 48): for a no-show of a booking whose accepted
	// terms have a no-show fee, charged to the kept card once however often it is marked;
	// nil when it owes none. Taking the mark back does not refund it (the owner refunds
	// from Stripe's dashboard if they mean to).
	Fee *Fee
}

// MarkAttendance marks the shop's booking attended or a no-show, or takes the mark back
// (AttendanceNone). The same mark again changes nothing (an owner's double click, a
// retried request); a different one, or taking it back, only within
// UndoAttendanceWithin of the mark. Only a live booking whose time has come is marked.
func (s *Service) MarkAttendance(ctx context.Context, shopID, bookingID uuid.UUID, a Attendance, now time.Time) (AttendanceMark, error) {
	out := AttendanceMark{BookingID: bookingID}
	var b db.BookingAttendanceLockRow
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out.Fee = nil
		b, err = queries.BookingAttendanceLock(ctx, tx, db.BookingAttendanceLockParams{ID: bookingID, ShopID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrBookingNotFound
		}
		if err != nil {
			return fmt.Errorf("lock booking %s: %w", bookingID, err)
		}
		cur, at := attendanceOf(b)
		if cur == a {
			out.Attendance, out.At = cur, at
			out.Fee, err = BookingFee(ctx, tx, bookingID)
			return err
		}
		if b.Status != BookingConfirmed && b.Status != BookingPendingPayment {
			return ErrAttendanceNotBooked
		}
		if now.Before(b.StartsAt) {
			return ErrAttendanceTooEarly
		}
		if at != nil && now.Sub(*at) > UndoAttendanceWithin {
			return ErrAttendanceTooLate
		}
		p := db.BookingSetAttendanceParams{ID: bookingID, Now: now}
		switch a {
		case AttendanceAttended:
			p.AttendedAt = &now
		case AttendanceNoShow:
			p.NoShowAt = &now
		}
		if err := queries.BookingSetAttendance(ctx, tx, p); err != nil {
			return fmt.Errorf("mark booking %s: %w", bookingID, err)
		}
		out.Attendance = a
		if a != AttendanceNone {
			out.At = &now
		}
		if a == AttendanceNoShow {
			out.Fee, err = s.claimFee(ctx, tx, shopID, bookingID, b.Status, b.Currency, payments.FeeNoShow, now)
			return err
		}
		out.Fee, err = BookingFee(ctx, tx, bookingID)
		return err
	})
	if err != nil || out.Fee == nil || out.Fee.State != FeePending || a != AttendanceNoShow {
		return out, err
	}
	// The mark is committed; the fee is charged after it, outside the booking's lock (a
	// slow provider must not hold it). A click that comes meanwhile sees it pending.
	shop, err := shops.Read(ctx, s.pool, shopID)
	if err != nil {
		return out, err
	}
	fee, err := s.chargeFee(ctx, shop, bookingID, b.StripeAccount.String, b.StripeCheckoutSessionID.String, b.Service, b.StartsAt, texts.In(shop.Language))
	if fee != nil {
		out.Fee = fee
	}
	if err != nil {
		s.log.WarnContext(ctx, "no-show fee not charged yet", "booking_id", bookingID, "err", err)
	}
	return out, nil
}

// attendanceOf is a locked booking's mark.
func attendanceOf(b db.BookingAttendanceLockRow) (Attendance, *time.Time) {
	switch {
	case b.AttendedAt != nil:
		return AttendanceAttended, b.AttendedAt
	case b.NoShowAt != nil:
		return AttendanceNoShow, b.NoShowAt
	}
	return AttendanceNone, nil
}
