package shopapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// ConsentExportPath is the consent record's CSV export.
const ConsentExportPath = "/api/consent/export"

// errNoConsent answers the consent routes of a server wired without the join service.
var errNoConsent = problem.New(problem.Unavailable, "unavailable", "the consent record is not served by this server")

// noEnd is the export's to when none is given: later than any event.
var noEnd = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// consentHistory is GET /api/customers/{id}/consent's answer: the events are join's
// own wire shape (join.Event), as the export writes them.
type consentHistory struct {
	Events []join.Event `json:"events"`
}

// customerConsent answers a customer's consent record, oldest first. The customer is
// looked up first so that another shop's is a 404 as on the other customer routes
// (History alone would answer it with no events).
func (h *Handlers) customerConsent(c echo.Context) error {
	if h.Join == nil {
		return errNoConsent
	}
	id, err := customerID(c)
	if err != nil {
		return err
	}
	ctx, shop := c.Request().Context(), shopOf(c)
	if _, err := h.Customers.Get(ctx, shop.ID, id); err != nil {
		return err
	}
	events, err := h.Join.History(ctx, shop.ID, id)
	if err != nil {
		return err
	}
	if events == nil {
		events = []join.Event{}
	}
	return c.JSON(http.StatusOK, consentHistory{Events: events})
}

// exportConsent answers the shop's consent events in [from, to) as CSV (join.WriteCSV),
// written as they are read: an absent from is the beginning, an absent to no end.
func (h *Handlers) exportConsent(c echo.Context) error {
	if h.Join == nil {
		return errNoConsent
	}
	from, err := queryTime(c, "from")
	if err != nil {
		return err
	}
	if from.IsZero() {
		from = time.Unix(0, 0)
	}
	to, err := queryTime(c, "to")
	if err != nil {
		return err
	}
	if to.IsZero() {
		to = noEnd
	}
	if !to.After(from) {
		return problem.Invalidf("to", "to must be after from (to is exclusive)")
	}
	shop := shopOf(c)
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	hd.Set(echo.HeaderContentDisposition, `attachment; filename="consent-`+shop.Slug+`.csv"`)
	// Numbers and names: keep them out of caches.
	hd.Set(echo.HeaderCacheControl, "no-store")
	// The first write sends 200; WriteCSV's first one comes after its first page is
	// read, so a failure to read it is still a proper error answer. A failure after it
	// ends the body short, and the error handler leaves a committed answer alone (it
	// logs the error).
	_, err = h.Join.WriteCSV(c.Request().Context(), c.Response(), shop.ID, from, to)
	return err
}
