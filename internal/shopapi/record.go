package shopapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Who was offered what, and why (issue 47): an opening's record, why a customer was or
// was not texted, a customer's history and stats, and the bookings' attendance.

// ErrBookingNotFound answers a booking the shop does not have.
var ErrBookingNotFound = problem.New(problem.NotFound, "booking_not_found", "no such booking")

// ErrNoRecord answers the record's routes on a server without the offers' record.
var ErrNoRecord = problem.New(problem.Unavailable, "record_unavailable", "the offers' record is not served here")

// openingOffers is GET /api/openings/{id}/offers: its waves, who each texted and why,
// what each left out, and the replies.
func (h *Handlers) openingOffers(c echo.Context) error {
	id, err := openingID(c)
	if err != nil {
		return err
	}
	if h.Offers == nil {
		return ErrNoRecord
	}
	rec, err := h.Offers.Record(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// explainOpening is GET /api/openings/{id}/explain?customer_id=: why that customer was
// or was not texted.
func (h *Handlers) explainOpening(c echo.Context) error {
	id, err := openingID(c)
	if err != nil {
		return err
	}
	raw := c.QueryParam("customer_id")
	if raw == "" {
		return problem.Invalidf("customer_id", "customer_id is required: the customer to explain")
	}
	cust, err := uuid.Parse(raw)
	if err != nil {
		return customers.ErrNotFound
	}
	if h.Offers == nil {
		return ErrNoRecord
	}
	ex, err := h.Offers.Explain(c.Request().Context(), shopOf(c).ID, id, cust)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ex.API())
}

// customerOffersPage is a page of a customer's offers, newest first.
type customerOffersPage struct {
	Offers []api.OfferHistoryEntry `json:"offers"`
	// NextBefore asks for the page after this one (?before=); null on the last.
	NextBefore *time.Time `json:"next_before"`
}

// customerOffers is GET /api/customers/{id}/offers?before=&limit=.
func (h *Handlers) customerOffers(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	var before time.Time
	if raw := c.QueryParam("before"); raw != "" {
		if before, err = time.Parse(time.RFC3339Nano, raw); err != nil {
			return problem.Invalidf("before", "before must be a time in RFC 3339, as next_before gives it")
		}
	}
	limit := 50
	if raw := c.QueryParam("limit"); raw != "" {
		if limit, err = strconv.Atoi(raw); err != nil || limit < 1 || limit > offers.MaxHistory {
			return problem.Invalidf("limit", "limit must be between 1 and %d", offers.MaxHistory)
		}
	}
	if h.Offers == nil {
		return ErrNoRecord
	}
	ctx := c.Request().Context()
	if _, err := h.Customers.Get(ctx, shopOf(c).ID, id); err != nil {
		return err
	}
	// One more than asked says whether a next page exists.
	hist, err := h.Offers.History(ctx, shopOf(c).ID, id, before, min(limit+1, offers.MaxHistory))
	if err != nil {
		return err
	}
	out := customerOffersPage{Offers: hist}
	if len(hist) > limit {
		out.Offers = hist[:limit]
		next := hist[limit-1].RecordedAt
		out.NextBefore = &next
	}
	if out.Offers == nil {
		out.Offers = []api.OfferHistoryEntry{}
	}
	return c.JSON(http.StatusOK, out)
}

// customerStats is GET /api/customers/{id}/stats.
func (h *Handlers) customerStats(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	st, err := h.Customers.Stats(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// clearNoShows is POST /api/customers/{id}/clear_no_shows: their no-shows until now no
// longer keep them out of offers (skip_after_no_shows). It answers their stats.
func (h *Handlers) clearNoShows(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := h.Customers.ClearNoShows(ctx, shopOf(c).ID, id); err != nil {
		return err
	}
	st, err := h.Customers.Stats(ctx, shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// attendanceJSON is a booking's attendance as the API answers it.
type attendanceJSON struct {
	BookingID uuid.UUID `json:"booking_id"`
	// Attendance is attended, no_show, or null when unmarked; MarkedAt when.
	Attendance *string    `json:"attendance"`
	MarkedAt   *time.Time `json:"marked_at"`
	// Fee is the booking's no-show fee (issue 48), when its accepted terms have one.
	Fee *api.Fee `json:"fee,omitempty"`
}

// markAttendance answers POST /api/bookings/{id}/attended and /no_show, and DELETE
// /api/bookings/{id}/attendance (the mark taken back within 24 hours).
func (h *Handlers) markAttendance(a ledger.Attendance) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			return ErrBookingNotFound
		}
		if h.Ledger == nil {
			return ErrNoRecord
		}
		m, err := h.Ledger.MarkAttendance(c.Request().Context(), shopOf(c).ID, id, a, time.Now())
		if errors.Is(err, ledger.ErrBookingNotFound) {
			return ErrBookingNotFound
		}
		if err != nil {
			return err
		}
		out := attendanceJSON{BookingID: m.BookingID, MarkedAt: m.At}
		if m.Attendance != ledger.AttendanceNone {
			v := string(m.Attendance)
			out.Attendance = &v
		}
		out.Fee = feeJSON(m.Fee)
		return c.JSON(http.StatusOK, out)
	}
}

// feeJSON is a booking's fee as the API shows it; nil for none.
func feeJSON(f *ledger.Fee) *api.Fee {
	if f == nil {
		return nil
	}
	return &api.Fee{Kind: string(f.Kind), Outcome: f.State, AmountCents: f.AmountCents, Currency: f.Currency,
		PaymentIntentID: nonEmpty(f.PaymentIntentID), DeclineCode: nonEmpty(f.DeclineCode), Message: nonEmpty(f.Message),
		ApplicationFeeCents: f.ApplicationFeeCents, At: f.At.UTC()}
}

// bookingProtection answers GET /api/bookings/{id}/protection: the booking's terms, the
// policy its customer accepted, and its fee.
func (h *Handlers) bookingProtection(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return ErrBookingNotFound
	}
	if h.Ledger == nil {
		return ErrNoRecord
	}
	p, err := h.Ledger.BookingProtection(c.Request().Context(), shopOf(c).ID, id)
	if errors.Is(err, ledger.ErrBookingNotFound) {
		return ErrBookingNotFound
	}
	if err != nil {
		return err
	}
	out := api.BookingProtection{BookingID: p.BookingID, Status: p.Status, PriceCents: p.AmountCents, Currency: p.Currency, Fee: feeJSON(p.Fee)}
	if t := p.Terms; t != nil {
		out.Mode = &t.Mode
		out.ChargedCents, out.DepositCents, out.BalanceCents, out.KeepCard = t.ChargedCents, t.DepositCents(), t.BalanceCents(), t.KeepCard
		if t.PolicyText != "" || t.NoShowFeeCents > 0 || t.LateCancelFeeCents > 0 {
			out.Policy = &api.AcceptedPolicy{Version: t.PolicyVersion, SHA256: t.PolicySHA256, Text: t.PolicyText,
				LateCancelHours: t.LateCancelHours, NoShowFeeCents: t.NoShowFeeCents, LateCancelFeeCents: t.LateCancelFeeCents,
				AcceptedAt: t.AcceptedAt, CheckoutSession: nonEmpty(t.CheckoutSession),
				IP: nonEmpty(t.AcceptedIP), UserAgent: nonEmpty(t.AcceptedUserAgent)}
		}
	}
	return c.JSON(http.StatusOK, out)
}

// ErrNotCancellable answers a late cancellation of a booking that is not live, or whose
// time has come (mark it a no-show instead).
var ErrNotCancellable = problem.New(problem.Conflict, "not_cancellable",
	"the booking is not live, or its time has come: a customer who did not come is a no-show (POST /api/bookings/{id}/no_show)")

// lateCancel answers POST /api/bookings/{id}/late_cancel: the owner enters a customer's
// late cancellation; the opening is offered again, and the accepted policy applies.
func (h *Handlers) lateCancel(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return ErrBookingNotFound
	}
	if h.Ledger == nil {
		return ErrNoRecord
	}
	res, err := h.Ledger.CancelLate(c.Request().Context(), shopOf(c).ID, id)
	switch {
	case errors.Is(err, ledger.ErrBookingNotFound):
		return ErrBookingNotFound
	case errors.Is(err, ledger.ErrNotCancellable):
		return ErrNotCancellable
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, api.LateCancellation{BookingID: res.BookingID, Late: res.Late, DepositKept: res.DepositKept,
		Refunded: res.Refunded, Opening: string(res.Result), Fee: feeJSON(res.Fee)})
}
