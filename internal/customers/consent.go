package customers

import (
	"cmp"
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// How an owner's change to a customer was entered: the consent record's method for the
// opt-ins and opt-outs it makes (Source.Method).
const (
	SourceAPI       = "api"
	SourceDashboard = "dashboard"
	SourceImport    = "import"
	// SourceCustomer is the customer's own act (a join confirmed by their YES), which
	// its caller records in the consent record itself: no owner's event is made.
	SourceCustomer = "customer"
)

// Source says who entered a change to a customer, for the consent record of the
// opt-ins and opt-outs it makes (Config.Consent). The zero value is the API.
type Source struct {
	// Method is SourceAPI (""), SourceDashboard, SourceImport or SourceCustomer. Import
	// always records SourceImport.
	Method string
	// By names who entered it, as the owner's side knows them ("api key", the
	// dashboard's login); "" records the method's default (defaultBy).
	By string
}

// defaultBy is who a change of each method is recorded as entered by, when the caller
// does not say.
var defaultBy = map[string]string{SourceAPI: "api key", SourceDashboard: "dashboard", SourceImport: "csv import"}

// check refuses a method the consent record does not know.
func (src Source) check() (Source, error) {
	src.Method = cmp.Or(src.Method, SourceAPI)
	if _, ok := defaultBy[src.Method]; !ok && src.Method != SourceCustomer {
		return Source{}, problem.Invalidf("source", "source must be api, dashboard, import or customer")
	}
	src.By = cmp.Or(src.By, defaultBy[src.Method])
	if len(src.By) > 200 {
		src.By = src.By[:200]
	}
	return src, nil
}

// ConsentChange is an opt-in or opt-out an owner entered (an add, an update or an
// import that turned a customer's sms_opt_in on or off), as the consent record keeps it.
type ConsentChange struct {
	ShopID, CustomerID uuid.UUID
	// OptIn is true for an opt-in, false for an opt-out.
	OptIn bool
	// Method is SourceAPI, SourceDashboard or SourceImport; By who entered it.
	Method, By string
	// Language is the customer's own; "" is the shop's.
	Language language.Code
	At       time.Time
}

// ConsentRecorder keeps owners' opt-ins and opt-outs in the consent record
// (internal/join's OwnerConsent, which owns that table), in tx: the transaction that
// makes them, so a change is never without its record nor a record without its change.
type ConsentRecorder interface {
	RecordOwnerConsent(ctx context.Context, tx pgx.Tx, changes []ConsentChange) error
}

// recordConsent hands changes to the configured recorder, in tx; without one, or
// without changes, it does nothing.
func (s *Service) recordConsent(ctx context.Context, tx pgx.Tx, changes []ConsentChange) error {
	if s.cfg.Consent == nil || len(changes) == 0 {
		return nil
	}
	return s.cfg.Consent.RecordOwnerConsent(ctx, tx, changes)
}
