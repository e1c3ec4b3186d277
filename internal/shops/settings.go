package shops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// ErrShopNotFound means there is no such shop.
var ErrShopNotFound = problem.New(problem.NotFound, "shop_not_found", "no such shop")

// ShopChange is an owner's edit of the shop's settings; nil fields stay as they are.
// The SMS number is not among them (it is the Twilio set-up's), nor is the key (see
// RotateKey).
type ShopChange struct {
	Name, Timezone, Currency, PaymentMode *string
	WaveSize                              *int
	WaveInterval, MinLead, Cooldown       *time.Duration
	// Quiet replaces the quiet hours when QuietSet; a nil Quiet then removes them.
	Quiet    *QuietHours
	QuietSet bool
	// MaxOffersPerDay replaces the daily cap when set; 0 removes it.
	MaxOffersPerDay *int
	FirstWaveDelay  *time.Duration
	SendRate        *int
	// CalendarFullDetails turns full names and numbers in the calendar feed on or off.
	CalendarFullDetails *bool
}

// Update changes a shop's settings, validated exactly as a new shop's are. They apply to
// the next wave and to the next inbound text (which reads the shop as it is stored).
// Openings keep their instant: a new time zone changes how their times read, never when
// they are.
func (s *Service) Update(ctx context.Context, id uuid.UUID, ch ShopChange) (Shop, error) {
	var out Shop
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := s.q.ShopGetForUpdate(ctx, tx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrShopNotFound
		}
		if err != nil {
			return fmt.Errorf("get shop %s: %w", id, err)
		}
		cur, err := FromRow(row)
		if err != nil {
			return err
		}
		n := NewShop{
			Name: cur.Name, Timezone: cur.Timezone, SMSNumber: cur.SMSNumber, Currency: cur.Currency,
			PaymentMode: cur.PaymentMode, Policy: cur.Policy, LeadSet: true, CooldownSet: true,
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&n.Name, ch.Name)
		set(&n.Timezone, ch.Timezone)
		set(&n.Currency, ch.Currency)
		set(&n.PaymentMode, ch.PaymentMode)
		p := &n.Policy
		if ch.WaveSize != nil {
			if p.WaveSize = *ch.WaveSize; p.WaveSize == 0 {
				p.WaveSize = -1 // an explicit 0 is invalid here, not "the default"
			}
		}
		if ch.WaveInterval != nil {
			if p.WaveInterval = *ch.WaveInterval; p.WaveInterval == 0 {
				p.WaveInterval = -1
			}
		}
		if ch.MinLead != nil {
			p.MinLead = *ch.MinLead
		}
		if ch.Cooldown != nil {
			p.Cooldown = *ch.Cooldown
		}
		if ch.QuietSet {
			p.Quiet = ch.Quiet
		}
		if ch.MaxOffersPerDay != nil {
			p.MaxOffersPerDay = *ch.MaxOffersPerDay
		}
		if ch.FirstWaveDelay != nil {
			p.FirstWaveDelay = *ch.FirstWaveDelay
		}
		if ch.SendRate != nil {
			if p.SendRate = *ch.SendRate; p.SendRate == 0 {
				p.SendRate = -1 // an explicit 0 is invalid here, not "the default"
			}
		}
		if err := s.normalise(&n); err != nil {
			return err
		}
		var qs, qe pgtype.Int4
		if p.Quiet != nil {
			qs = pgtype.Int4{Int32: int32(p.Quiet.Start), Valid: true}
			qe = pgtype.Int4{Int32: int32(p.Quiet.End), Valid: true}
		}
		fullDetails := cur.CalendarFullDetails
		if ch.CalendarFullDetails != nil {
			fullDetails = *ch.CalendarFullDetails
		}
		updated, err := s.q.ShopUpdate(ctx, tx, db.ShopUpdateParams{
			ID: id, Name: n.Name, Timezone: n.Timezone, Currency: n.Currency, PaymentMode: n.PaymentMode,
			WaveSize: int32(p.WaveSize), WaveIntervalSeconds: int32(p.WaveInterval / time.Second),
			MinLeadMinutes: int32(p.MinLead / time.Minute), QuietStartMinute: qs, QuietEndMinute: qe,
			CooldownSeconds: int32(p.Cooldown / time.Second), MaxOffersPerDay: capParam(p.MaxOffersPerDay),
			FirstWaveDelaySeconds: int32(p.FirstWaveDelay / time.Second), SendRate: int32(p.SendRate),
			CalendarFullDetails: fullDetails,
		})
		if err != nil {
			return fmt.Errorf("update shop %s: %w", id, err)
		}
		out, err = FromRow(updated)
		return err
	})
	return out, err
}

// RotateKey gives the shop a new API key and returns it; it is shown only this once.
// The old key stops working when this returns: Authenticate reads the key's hash from
// Postgres on every call and caches nothing. The returned shop's KeyVersion has moved
// on in the same statement, which ends the dashboard sessions signed in before.
func (s *Service) RotateKey(ctx context.Context, id uuid.UUID) (Shop, string, error) {
	key, hash, err := newKey()
	if err != nil {
		return Shop{}, "", err
	}
	row, err := s.q.ShopRotateKey(ctx, s.pool, db.ShopRotateKeyParams{ID: id, ApiKeyHash: hash})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, "", ErrShopNotFound
	}
	if err != nil {
		return Shop{}, "", fmt.Errorf("rotate key of shop %s: %w", id, err)
	}
	shop, err := FromRow(row)
	return shop, key, err
}
