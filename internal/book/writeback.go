package book

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Writing moves back. A move-up of a cal.com or Square appointment is written back to
// the vendor through its API when the shop has a connector of that kind holding the
// vendor's API key (SetAPIKey): MoveUp records the write-back (appointment_write_backs,
// pending) and enqueues jobs.AppointmentWriteBack in the move's own transaction;
// WriteBackWorker calls WriteBack, which calls the vendor (Config.Movers). Written, the
// move is copied (it leaves MovesToCopy, by "cal.com API" or "Square API": WriteBackOf);
// refused for good, it stays on MovesToCopy with the vendor's reason. A move of a shop
// whose connector holds no key is listed to copy, as it always was.
//
// The vendor then tells us of our own write by webhook: cal.com's reschedule makes a new
// booking and sends BOOKING_RESCHEDULED for it (rescheduleUid: the booking moved);
// Square sends booking.updated with the booking at its new time and a new version. The
// move is in the book already (the booking the YES made holds the new time; the moved
// appointment released the old one), so Apply recognises the echo by the write-back
// (the booking it moved, the time it wrote) and records nothing of it.

// Mover writes a move back to the vendor that keeps the booking, with the connector's
// API key: calcom.Client and square.Client. A refusal is a *connectors.VendorError.
type Mover interface {
	Move(ctx context.Context, key string, m connectors.Move) (connectors.Moved, error)
}

// WriteBackState is where a move's write-back stands.
type WriteBackState string

// States of a write-back.
const (
	WriteBackPending WriteBackState = "pending"
	WriteBackWritten WriteBackState = "written"
	WriteBackFailed  WriteBackState = "failed"
)

// WriteBack is a move's write-back to its vendor, as the owner sees it.
type WriteBack struct {
	AppointmentID uuid.UUID
	Source        connectors.Source
	State         WriteBackState
	// To is the time written.
	To time.Time
	// By is who copied the move once written ("cal.com API", "Square API"), "" before.
	By string
	// Error is the vendor's reason, in words for the owner: the last attempt's while
	// pending, the refusal once failed.
	Error    string
	Attempts int
	// NewExternalID is the booking at its new time in the vendor (cal.com's new uid).
	NewExternalID string
	UpdatedAt     time.Time
}

// ErrNoWriteBack means the appointment's move is not written back (no key held when
// it moved, or not a move of cal.com or Square).
var ErrNoWriteBack = problem.New(problem.NotFound, "write_back_not_found", "this move is not written back through an API")

// maxAPIKey is the longest API key a connector takes.
const maxAPIKey = 500

// apiKeySealContext binds a sealed API key to its shop and connector (apart from the
// connector's secret: one never opens as the other).
func apiKeySealContext(shopID, id uuid.UUID) []byte {
	return []byte("connectors.api_key:" + shopID.String() + ":" + id.String())
}

// copiedBy names who copied a move written through source's API.
func copiedBy(source connectors.Source) string {
	switch source {
	case connectors.SourceCalcom:
		return "cal.com API"
	case connectors.SourceSquare:
		return "Square API"
	}
	return string(source) + " API"
}

func vendorName(source connectors.Source) string {
	if source == connectors.SourceCalcom {
		return "cal.com"
	}
	return "Square"
}

// checkAPIKey checks a vendor's API key as the owner pastes it: cal.com's start with
// cal_live_ or cal_test_; Square's access token is one word.
func checkAPIKey(kind connectors.Source, key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" || len(key) > maxAPIKey || strings.ContainsAny(key, " \t\r\n\x00") || !isASCII(key) {
		return "", problem.Invalidf("api_key", "api_key must be the key the vendor shows, one word of at most %d characters", maxAPIKey)
	}
	switch kind {
	case connectors.SourceCalcom:
		if !strings.HasPrefix(key, "cal_live_") && !strings.HasPrefix(key, "cal_test_") {
			return "", problem.Invalidf("api_key", "a cal.com API key starts with cal_live_ or cal_test_ (Settings → Developer → API keys)")
		}
	case connectors.SourceSquare:
	default:
		return "", problem.Invalidf("api_key", "only a calcom or square connector takes an api_key")
	}
	return key, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// SetAPIKey gives shopID's connector id the vendor's API key (cal.com's cal_live_…
// or cal_test_… key; Square's access token), sealed under SECRETS_KEY and never shown
// again; it replaces one given before. From now on the shop's moves of that vendor's
// appointments are written back through its API. Errors: ErrConnectorNotFound; an
// Invalid problem on field api_key (an ics connector, or a key that does not read as
// the vendor's).
func (s *Service) SetAPIKey(ctx context.Context, shopID, id uuid.UUID, key string) (Connector, error) {
	c, err := s.Connector(ctx, shopID, id)
	if err != nil {
		return Connector{}, err
	}
	key, err = checkAPIKey(c.Kind, key)
	if err != nil {
		return Connector{}, err
	}
	v, err := s.cfg.Secrets.Seal([]byte(key), apiKeySealContext(shopID, id))
	if err != nil {
		return Connector{}, fmt.Errorf("seal connector api key: %w", err)
	}
	row, err := queries.ConnectorSetAPIKey(ctx, s.pool, db.ConnectorSetAPIKeyParams{ID: id, ShopID: shopID,
		ApiKey: pgtype.Text{String: v, Valid: true}, Now: s.cfg.Now().UTC()})
	if err != nil {
		return Connector{}, s.connectorErr(id, err)
	}
	return connectorFromRow(row), nil
}

// ClearAPIKey removes shopID's connector id's API key: moves are listed to copy again.
// A write-back still pending finds no key and is left to the owner, with that reason.
// Clearing a connector without a key changes nothing. Errors: ErrConnectorNotFound.
func (s *Service) ClearAPIKey(ctx context.Context, shopID, id uuid.UUID) (Connector, error) {
	row, err := queries.ConnectorSetAPIKey(ctx, s.pool, db.ConnectorSetAPIKeyParams{ID: id, ShopID: shopID, Now: s.cfg.Now().UTC()})
	if err != nil {
		return Connector{}, s.connectorErr(id, err)
	}
	return connectorFromRow(row), nil
}

// writeBackTx records, in the move's transaction tx, the write-back of moved (an
// appointment of shop moved to start at to) and enqueues its job, when it is a cal.com
// or Square appointment and the shop's connector of that kind holds an API key. It
// reports whether it did.
func (s *Service) writeBackTx(ctx context.Context, tx pgx.Tx, shop shops.Shop, moved db.Appointment, to, now time.Time) (bool, error) {
	src := connectors.Source(moved.Source)
	if s.cfg.Queue == nil || (src != connectors.SourceCalcom && src != connectors.SourceSquare) || !moved.ExternalID.Valid {
		return false, nil
	}
	if _, err := queries.ConnectorAPIKeyFor(ctx, tx, db.ConnectorAPIKeyForParams{ShopID: shop.ID, Kind: string(src),
		AppointmentID: moved.ID}); errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("read connector's api key: %w", err)
	}
	n, err := queries.WriteBackInsert(ctx, tx, db.WriteBackInsertParams{AppointmentID: moved.ID, ShopID: shop.ID, Source: string(src),
		ExternalID: moved.ExternalID.String, StartsAt: to.UTC(), Now: now})
	if err != nil {
		return false, fmt.Errorf("record write-back: %w", err)
	}
	if n == 0 {
		return true, nil
	}
	if _, err := s.cfg.Queue.InsertTx(ctx, tx, jobs.AppointmentWriteBack{ShopID: shop.ID, AppointmentID: moved.ID}, nil); err != nil {
		return false, fmt.Errorf("enqueue write-back: %w", err)
	}
	return true, nil
}

// WriteBackOutcome is what one attempt of WriteBack did.
type WriteBackOutcome string

// Outcomes of an attempt.
const (
	// OutcomeWritten: the vendor has the move (or had it: an earlier attempt's answer
	// was lost, or its echo came first); the move is copied.
	OutcomeWritten WriteBackOutcome = "written"
	// OutcomeFailed: refused for good (or the last attempt failed); left to the owner.
	OutcomeFailed WriteBackOutcome = "failed"
	// OutcomeDone: nothing to do (written or failed before, or not written back).
	OutcomeDone WriteBackOutcome = "done"
)

// WriteBack makes one attempt at writing shopID's appointment's move back to its
// vendor, with the key its connector holds now. last says this is the final attempt:
// a passing failure then fails the write-back too. An error is a passing failure (the
// vendor down or answering 5xx or 429, Postgres, SECRETS_KEY), for the job to retry;
// the vendor's reason is kept on the write-back meanwhile.
func (s *Service) WriteBack(ctx context.Context, shopID, appointmentID uuid.UUID, last bool) (WriteBackOutcome, error) {
	w, err := queries.WriteBackGet(ctx, s.pool, db.WriteBackGetParams{AppointmentID: appointmentID, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return OutcomeDone, nil
	}
	if err != nil {
		return "", fmt.Errorf("read write-back of %s: %w", appointmentID, err)
	}
	if WriteBackState(w.State) != WriteBackPending {
		return OutcomeDone, nil
	}
	src := connectors.Source(w.Source)
	now := s.cfg.Now().UTC()
	if w.NewExternalID.Valid || w.NewVersion.Valid {
		// Its echo came before this attempt: the vendor has it.
		return OutcomeWritten, s.written(ctx, w, connectors.Moved{})
	}
	// The booking changed in the vendor since the move (the owner rescheduled or
	// cancelled it there, and the book took it: keepMove): the owner's change stands,
	// and writing the move now would undo it.
	a, err := queries.AppointmentGet(ctx, s.pool, db.AppointmentGetParams{ShopID: shopID, ID: appointmentID})
	if err != nil {
		return "", fmt.Errorf("read moved appointment %s: %w", appointmentID, err)
	}
	if connectors.Status(a.Appointment.Status) != connectors.StatusMoved {
		return OutcomeFailed, s.failed(ctx, w, fmt.Sprintf("The booking was changed in %s after the move, so the move was not written: "+
			"check this customer's bookings there.", vendorName(src)))
	}
	mover := s.cfg.Movers[src]
	keyRow, err := queries.ConnectorAPIKeyFor(ctx, s.pool, db.ConnectorAPIKeyForParams{ShopID: shopID, Kind: w.Source,
		AppointmentID: appointmentID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return OutcomeFailed, s.failed(ctx, w, fmt.Sprintf("The %s connector no longer holds an API key: copy this move by hand.", vendorName(src)))
	case err != nil:
		return "", fmt.Errorf("read connector's api key: %w", err)
	case mover == nil:
		return OutcomeFailed, s.failed(ctx, w, fmt.Sprintf("This server does not write moves to %s: copy this move by hand.", vendorName(src)))
	}
	key, err := s.cfg.Secrets.Open(keyRow.ApiKey, apiKeySealContext(keyRow.ShopID, keyRow.ID))
	if err != nil {
		return "", fmt.Errorf("connector %s: the api key cannot be read (SECRETS_KEY): %w", keyRow.ID, err)
	}
	moved, err := mover.Move(ctx, string(key), connectors.Move{ExternalID: w.ExternalID, To: w.StartsAt,
		Key: "slotrecovery-move-" + appointmentID.String()})
	if err == nil {
		return OutcomeWritten, s.written(ctx, w, moved)
	}
	reason := ownerReason(src, err)
	var ve *connectors.VendorError
	if (errors.As(err, &ve) && ve.Permanent()) || last {
		return OutcomeFailed, s.failed(ctx, w, reason)
	}
	if _, aerr := queries.WriteBackAttempt(ctx, s.pool, db.WriteBackAttemptParams{AppointmentID: appointmentID, Error: reason, Now: now}); aerr != nil {
		return "", errors.Join(err, aerr)
	}
	return "", fmt.Errorf("write move of %s back to %s: %w", appointmentID, vendorName(src), err)
}

// written records that the vendor has w's move: the write-back is written and the move
// copied (it leaves MovesToCopy), together.
func (s *Service) written(ctx context.Context, w db.AppointmentWriteBack, m connectors.Moved) error {
	now := s.cfg.Now().UTC()
	p := db.WriteBackWrittenParams{AppointmentID: w.AppointmentID, Now: now}
	if m.ExternalID != "" && connectors.Source(w.Source) == connectors.SourceCalcom {
		p.NewExternalID = pgtype.Text{String: m.ExternalID, Valid: true}
	}
	if m.Version > 0 {
		p.NewVersion = pgtype.Int8{Int64: m.Version, Valid: true}
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := queries.WriteBackWritten(ctx, tx, p)
		if err != nil {
			return fmt.Errorf("record write-back of %s: %w", w.AppointmentID, err)
		}
		if n == 0 {
			return nil
		}
		if _, err := queries.AppointmentMarkCopied(ctx, tx, db.AppointmentMarkCopiedParams{ID: w.AppointmentID, ShopID: w.ShopID, Now: &now}); err != nil {
			return fmt.Errorf("mark move copied: %w", err)
		}
		return nil
	})
}

// failed leaves w's move to the owner, with reason.
func (s *Service) failed(ctx context.Context, w db.AppointmentWriteBack, reason string) error {
	if _, err := queries.WriteBackFailed(ctx, s.pool, db.WriteBackFailedParams{AppointmentID: w.AppointmentID,
		Error: clip(reason, 500), Now: s.cfg.Now().UTC()}); err != nil {
		return fmt.Errorf("record write-back of %s failed: %w", w.AppointmentID, err)
	}
	return nil
}

// ownerReason says, for the owner, why the vendor did not take a move.
func ownerReason(src connectors.Source, err error) string {
	name := vendorName(src)
	var ve *connectors.VendorError
	if !errors.As(err, &ve) {
		return fmt.Sprintf("%s could not be reached.", name)
	}
	said := ""
	if ve.Message != "" {
		said = fmt.Sprintf(" (%s said: %q)", name, clip(ve.Message, 200))
	} else if ve.Code != "" {
		said = fmt.Sprintf(" (%s)", ve.Code)
	}
	switch {
	case ve.Status == 401 || ve.Status == 403:
		return fmt.Sprintf("%s refused the connector's API key%s: give the connector a new key, and copy this move by hand.", name, said)
	case ve.Status == 404 || ve.Status == 410:
		return fmt.Sprintf("%s has no such booking any more%s.", name, said)
	case ve.Status == 429:
		return fmt.Sprintf("%s asked us to slow down%s.", name, said)
	case ve.Status >= 500:
		return fmt.Sprintf("%s failed to answer (%d).", name, ve.Status)
	}
	return fmt.Sprintf("%s refused the move%s.", name, said)
}

// WriteBackOf returns the write-back of shopID's moved appointment: ErrNoWriteBack when
// its move is not written back.
func (s *Service) WriteBackOf(ctx context.Context, shopID, appointmentID uuid.UUID) (WriteBack, error) {
	w, err := queries.WriteBackGet(ctx, s.pool, db.WriteBackGetParams{AppointmentID: appointmentID, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return WriteBack{}, ErrNoWriteBack
	}
	if err != nil {
		return WriteBack{}, fmt.Errorf("read write-back of %s: %w", appointmentID, err)
	}
	out := WriteBack{AppointmentID: w.AppointmentID, Source: connectors.Source(w.Source), State: WriteBackState(w.State),
		To: w.StartsAt.UTC(), Error: w.Error, Attempts: int(w.Attempts), NewExternalID: w.NewExternalID.String, UpdatedAt: w.UpdatedAt.UTC()}
	if out.State == WriteBackWritten {
		out.By = copiedBy(out.Source)
	}
	return out, nil
}

// echo reports whether a, delivered by the shop's connector, is the vendor telling us
// of a move we wrote back (see the top of this file), and records what it names. skip
// collects the external ids of the delivery's other appointments that are part of the
// same echo (cal.com's original booking, described as moved).
func (s *Service) echo(ctx context.Context, shopID uuid.UUID, a connectors.Appointment, skip map[string]bool) (bool, error) {
	if skip[a.ExternalID] {
		return true, nil
	}
	switch a.Source {
	case connectors.SourceCalcom:
		if a.Replaces != "" {
			w, err := queries.WriteBackByExternal(ctx, s.pool, db.WriteBackByExternalParams{ShopID: shopID, Source: string(a.Source), ExternalID: a.Replaces})
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return false, fmt.Errorf("read write-back: %w", err)
			case a.StartsAt.Equal(w.StartsAt):
				skip[a.Replaces] = true
				return true, s.noteEcho(ctx, w.AppointmentID, pgtype.Text{String: a.ExternalID, Valid: true}, pgtype.Int8{})
			}
		}
		// A later description of the booking our write made, still at the time written:
		// the book holds that time with the booking the YES made.
		w, err := queries.WriteBackByNew(ctx, s.pool, db.WriteBackByNewParams{ShopID: shopID, Source: string(a.Source),
			NewExternalID: pgtype.Text{String: a.ExternalID, Valid: true}})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("read write-back: %w", err)
		}
		return a.Status == connectors.StatusBooked && a.StartsAt.Equal(w.StartsAt), nil
	case connectors.SourceSquare:
		w, err := queries.WriteBackByExternal(ctx, s.pool, db.WriteBackByExternalParams{ShopID: shopID, Source: string(a.Source), ExternalID: a.ExternalID})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("read write-back: %w", err)
		}
		if a.Status != connectors.StatusBooked || !a.StartsAt.Equal(w.StartsAt) {
			return false, nil
		}
		return true, s.noteEcho(ctx, w.AppointmentID, pgtype.Text{}, pgtype.Int8{Int64: a.Version, Valid: a.Version > 0})
	}
	return false, nil
}

// keepMove decides, in the upsert's transaction (holding the appointment's row lock, so
// after any move of it has committed), whether p, a source's description of an
// appointment b held, leaves it moved. It does when b is moved by a move-up (moved_to
// set), p describes it booked, and p is not known to be newer than the move: its version
// is not above the one the vendor gave our write-back of the move (the version Square
// returned for it, or its echo's), or, while no such version is known (the write-back
// pending or failed, or the move left to the owner to copy), p holds the booking at the
// time it held before the move. Such a description is of the booking before the move
// reached the source (a delivery racing the write-back, a note edited meanwhile, a feed
// polled before the owner copied the move): the move is ours, and putting the booking
// back at its former time would book that time twice, or withdraw the opening it freed.
// p is then made to keep the appointment moved at its former time; the rest of it (name,
// service, the source's order) is recorded as any newer description is. A description
// above our write's version is the owner's own change in the source and applies, at
// whatever time it names (back at the former time too); so does one of another time
// while no version of our write is known (the owner rescheduled it in the source).
func keepMove(ctx context.Context, tx pgx.Tx, b before, p *db.AppointmentUpsertParams) error {
	prev := b.row
	if !b.known || connectors.Status(prev.Status) != connectors.StatusMoved || !prev.MovedTo.Valid ||
		connectors.Status(p.Status) != connectors.StatusBooked {
		return nil
	}
	keep := p.StartsAt.Equal(prev.StartsAt) && p.DurationMinutes == prev.DurationMinutes
	w, err := queries.WriteBackGet(ctx, tx, db.WriteBackGetParams{AppointmentID: prev.ID, ShopID: prev.ShopID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read write-back of %s: %w", prev.ID, err)
	case w.NewVersion.Valid:
		keep = p.SourceVersion <= w.NewVersion.Int64
	}
	if keep {
		p.Status = string(connectors.StatusMoved)
		p.StartsAt, p.DurationMinutes, p.StaffID = prev.StartsAt, prev.DurationMinutes, prev.StaffID
	}
	return nil
}

func (s *Service) noteEcho(ctx context.Context, id uuid.UUID, newID pgtype.Text, version pgtype.Int8) error {
	if err := queries.WriteBackNoteEcho(ctx, s.pool, db.WriteBackNoteEchoParams{AppointmentID: id, NewExternalID: newID, NewVersion: version}); err != nil {
		return fmt.Errorf("note echo of write-back %s: %w", id, err)
	}
	return nil
}
