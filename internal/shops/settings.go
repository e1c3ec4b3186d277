package shops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// ErrShopNotFound means there is no such shop.
var ErrShopNotFound = problem.New(problem.NotFound, "shop_not_found", "no such shop")

// ShopChange is an owner's edit of the shop's settings; nil fields stay as they are.
// The SMS number is not among them (it is the Twilio set-up's), nor is the key (see
// RotateKey).
type ShopChange struct {
	Name, Timezone, Currency, PaymentMode *string
	// Policy is the offer policy's fields to change, by the rule a new shop's follow.
	Policy PolicyFields
	// CalendarFullDetails turns full names and numbers in the calendar feed on or off.
	CalendarFullDetails *bool
	// Language replaces the shop's language: one of language.All, in any case.
	Language *language.Code
	// AutoDeclare turns on or off the declaration of a cancelled appointment's opening
	// by itself (Shop.AutoDeclare).
	AutoDeclare *bool
	// Formality replaces how the texts address customers; FormalityDefault goes back to
	// the language's default.
	Formality *Formality
	// GSM7 replaces the texts' GSM-7 setting.
	GSM7 *GSM7
	// HelpContact replaces the contact the HELP answer gives; "" removes it (the answer
	// then gives the SMS number).
	HelpContact *string
	// Slug replaces the join page's name (CheckSlug); another shop's is refused
	// (ErrSlugTaken).
	Slug *string
	// PrivacyURL replaces the privacy policy's address; "" removes it.
	PrivacyURL *string
	// MoveUpDays and ChainMax replace the move-up settings (Shop.MoveUpDays,
	// Shop.ChainMax), within their ranges.
	MoveUpDays, ChainMax *int
	// CustomersCancelByText replaces Shop.CustomersCancelByText.
	CustomersCancelByText *bool
	// Ranking replaces the wave's order inside a priority tier (one of Rankings).
	Ranking *Ranking
	// SkipAfterNoShows replaces Shop.SkipAfterNoShows when SkipAfterNoShowsSet: nil
	// for never, else 1 to MaxSkipAfterNoShows.
	SkipAfterNoShows    *int
	SkipAfterNoShowsSet bool
	// JoinKeywords, when set, replace the shop's own join keywords (CheckJoinKeywords);
	// an empty list leaves only the defaults.
	JoinKeywords *[]string
	// Protection changes the no-show protection settings (deposit, kept card, policy,
	// fees); checked against the payment mode the change leaves.
	Protection ProtectionChange
}

// Ranking is how a wave orders the customers of one priority tier (issue 47).
type Ranking string

// The rankings: RankingPriority is the list's own order; RankingFair texts first who was
// offered least recently, then who booked least recently; RankingReliable who had the
// fewest no-shows and lapsed holds in 180 days, then as fair; RankingValue who would be
// offered the dearest service, then as fair.
const (
	RankingPriority Ranking = "priority"
	RankingFair     Ranking = "fair"
	RankingReliable Ranking = "reliable"
	RankingValue    Ranking = "value"
)

// Rankings are the valid rankings, the default first.
var Rankings = []Ranking{RankingPriority, RankingFair, RankingReliable, RankingValue}

// MaxSkipAfterNoShows is the largest skip_after_no_shows (the CHECK of migration 0073).
const MaxSkipAfterNoShows = 20

// ranking applies ch's ranking settings to cur's and checks them.
func (ch ShopChange) ranking(cur Shop) (Ranking, pgtype.Int4, error) {
	r := cur.Ranking
	if ch.Ranking != nil {
		r = Ranking(strings.ToLower(strings.TrimSpace(string(*ch.Ranking))))
		if !slices.Contains(Rankings, r) {
			return "", pgtype.Int4{}, problem.Invalidf("ranking", "ranking must be one of priority, fair, reliable, value")
		}
	}
	skip := cur.SkipAfterNoShows
	if ch.SkipAfterNoShowsSet {
		skip = ch.SkipAfterNoShows
	}
	if skip == nil {
		return r, pgtype.Int4{}, nil
	}
	if *skip < 1 || *skip > MaxSkipAfterNoShows {
		return "", pgtype.Int4{}, problem.Invalidf("skip_after_no_shows", "skip_after_no_shows must be between 1 and %d, or null for never", MaxSkipAfterNoShows)
	}
	return r, pgtype.Int4{Int32: int32(*skip), Valid: true}, nil
}

// Move-up settings' bounds, as the shops table's CHECKs have them (migration 0067).
const (
	MaxMoveUpDays = 90
	MaxChainMax   = 20
)

// moveUp applies ch's move-up settings to cur's and checks them.
func (ch ShopChange) moveUp(cur Shop) (days, chain int, err error) {
	days, chain = cur.MoveUpDays, cur.ChainMax
	if ch.MoveUpDays != nil {
		days = *ch.MoveUpDays
	}
	if ch.ChainMax != nil {
		chain = *ch.ChainMax
	}
	if days < 0 || days > MaxMoveUpDays {
		return 0, 0, problem.Invalidf("move_up_days", "move_up_days must be between 0 and %d", MaxMoveUpDays)
	}
	if chain < 0 || chain > MaxChainMax {
		return 0, 0, problem.Invalidf("chain_max", "chain_max must be between 0 and %d", MaxChainMax)
	}
	return days, chain, nil
}

// Update changes a shop's settings, validated exactly as a new shop's are. They apply to
// the next wave and to the next inbound text (which reads the shop as it is stored).
// Openings keep their instant: a new time zone changes how their times read, never when
// they are.
func (s *Service) Update(ctx context.Context, id uuid.UUID, ch ShopChange) (Shop, error) {
	var out Shop
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.ShopGetForUpdate(ctx, tx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrShopNotFound
		}
		if err != nil {
			return fmt.Errorf("get shop %s: %w", id, err)
		}
		cur, err := FromRow(&row)
		if err != nil {
			return err
		}
		n := NewShop{
			Name: cur.Name, Timezone: cur.Timezone, SMSNumber: cur.SMSNumber, Currency: cur.Currency,
			PaymentMode: cur.PaymentMode, Language: cur.Language,
			NotifyPhone: cur.NotifyPhone, Formality: cur.Formality, GSM7: cur.GSM7, HelpContact: cur.HelpContact,
			Slug: cur.Slug, PrivacyURL: cur.PrivacyURL,
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
		if ch.Language != nil {
			n.Language = *ch.Language
		}
		if ch.Formality != nil {
			n.Formality = *ch.Formality
		}
		if ch.GSM7 != nil {
			n.GSM7 = *ch.GSM7
		}
		set(&n.HelpContact, ch.HelpContact)
		set(&n.Slug, ch.Slug)
		set(&n.PrivacyURL, ch.PrivacyURL)
		if n.Slug == "" {
			return problem.Invalidf("slug", "slug must be 3 to 40 letters a-z, digits and single dashes, such as joes-barbers")
		}
		p := cur.Policy
		ch.Policy.apply(&p)
		if err := s.normalise(&n, &p); err != nil {
			return err
		}
		moveUpDays, chainMax, err := ch.moveUp(cur)
		if err != nil {
			return err
		}
		ranking, skip, err := ch.ranking(cur)
		if err != nil {
			return err
		}
		joinKeywords := cur.JoinKeywords
		if ch.JoinKeywords != nil {
			if joinKeywords, err = CheckJoinKeywords(*ch.JoinKeywords); err != nil {
				return err
			}
		}
		cancelByText := cur.CustomersCancelByText
		if ch.CustomersCancelByText != nil {
			cancelByText = *ch.CustomersCancelByText
		}
		if err := s.checkOpeningsCharge(ctx, tx, cur, n); err != nil {
			return err
		}
		protection, err := ch.Protection.apply(cur.Protection, n.PaymentMode, s.cfg.StripeConnect)
		if err != nil {
			return err
		}
		if err := s.checkCharges(protection, n); err != nil {
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
		autoDeclare := cur.AutoDeclare
		if ch.AutoDeclare != nil {
			autoDeclare = *ch.AutoDeclare
		}
		updated, err := queries.ShopUpdate(ctx, tx, db.ShopUpdateParams{
			ID: id, Name: n.Name, Timezone: n.Timezone, Currency: n.Currency, PaymentMode: n.PaymentMode,
			WaveSize: int32(p.WaveSize), WaveIntervalSeconds: int32(p.WaveInterval / time.Second),
			MinLeadMinutes: int32(p.MinLead / time.Minute), QuietStartMinute: qs, QuietEndMinute: qe,
			CooldownSeconds: int32(p.Cooldown / time.Second), MaxOffersPerDay: capParam(p.MaxOffersPerDay),
			FirstWaveDelaySeconds: int32(p.FirstWaveDelay / time.Second), SendRate: int32(p.SendRate),
			CalendarFullDetails: fullDetails, Language: string(n.Language),
			NotifyPhone: pgtype.Text{String: n.NotifyPhone, Valid: n.NotifyPhone != ""}, AutoDeclare: autoDeclare,
			Formality: formalityParam(n.Formality), Gsm7: string(n.GSM7), HelpContact: textParam(n.HelpContact),
			Slug: n.Slug, PrivacyUrl: textParam(n.PrivacyURL),
			MoveUpDays: int32(moveUpDays), ChainMax: int32(chainMax),
			CustomersCancelByText: cancelByText, Ranking: string(ranking), SkipAfterNoShows: skip,
			JoinKeywords: joinKeywords,
		})
		if slugTaken(err) {
			return ErrSlugTaken
		}
		if err != nil {
			return fmt.Errorf("update shop %s: %w", id, err)
		}
		if protection != cur.Protection || updated.PaymentMode != cur.PaymentMode {
			if updated, err = queries.ShopSetProtection(ctx, tx, protectionParams(id, protection)); err != nil {
				return fmt.Errorf("update protection of shop %s: %w", id, err)
			}
		}
		out, err = s.fromRow(updated)
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
	row, err := queries.ShopRotateKey(ctx, s.pool, db.ShopRotateKeyParams{ID: id, ApiKeyHash: hash})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, "", ErrShopNotFound
	}
	if err != nil {
		return Shop{}, "", fmt.Errorf("rotate key of shop %s: %w", id, err)
	}
	shop, err := s.fromRow(row)
	return shop, key, err
}

// CodeBelowMinimumCharge is the code of the answer to a change of currency or payment
// mode refused because open openings are priced below the provider's minimum charge.
const CodeBelowMinimumCharge = "openings_below_minimum_charge"

// namedOpenings bounds how many openings a refusal names.
const namedOpenings = 5

// checkOpeningsCharge refuses a change that would make a checkout shop charge its open
// openings less than the payment provider's minimum in the (new) currency: switching
// from no payments to checkout, or changing a checkout shop's currency. Declare holds new
// openings to the minimum; without this, the settings were a way around it, and every
// taker of such an opening would hear "yours!" and then that the hold lapsed. Refusing
// (an Invalid problem, 422, naming the openings; rather than cancelling them, or letting
// them be) leaves the owner in charge: they cancel those openings, or keep the setting,
// knowing which ones are at stake. Run in the transaction that holds the shop's row
// (FOR UPDATE, taken before this looks at the openings), so two changes cannot pass each
// other, nor a declaration: Declare reads the row FOR SHARE (ReadForShare) before it
// inserts, so its opening is either committed before this looks, or checked against the
// new settings. Open openings are checked, and held ones (their booking awaits payment):
// a hold that lapses reopens its opening, in the currency of that day. A confirmed one is
// paid.
func (s *Service) checkOpeningsCharge(ctx context.Context, tx pgx.Tx, cur Shop, n NewShop) error {
	if s.cfg.MinimumCharge == nil || n.PaymentMode != PaymentCheckout ||
		(cur.PaymentMode == PaymentCheckout && cur.Currency == n.Currency) {
		return nil
	}
	minimum := s.cfg.MinimumCharge(n.Currency)
	if minimum <= 0 {
		return nil
	}
	rows, err := queries.ShopOpeningsBelowCharge(ctx, tx, db.ShopOpeningsBelowChargeParams{
		ShopID: cur.ID, Minimum: minimum, MaxRows: namedOpenings,
	})
	if err != nil {
		return fmt.Errorf("check openings of shop %s against the minimum charge: %w", cur.ID, err)
	}
	if len(rows) == 0 {
		return nil
	}
	field, keep := "payment_mode", "payment_mode "+cur.PaymentMode
	if cur.Currency != n.Currency {
		field, keep = "currency", "currency "+cur.Currency
	}
	code := strings.ToUpper(n.Currency)
	named := make([]string, len(rows))
	for i, r := range rows {
		named[i] = fmt.Sprintf("%s (%s, %s, price_cents %d = %s %s)", r.ID, cur.When(r.StartsAt), r.Service,
			r.PriceCents, money.Plain(r.PriceCents, n.Currency), code)
	}
	list := strings.Join(named, "; ")
	if more := int(rows[0].Total) - len(rows); more > 0 {
		list += fmt.Sprintf("; and %d more", more)
	}
	return &problem.Error{Kind: problem.Invalid, Code: CodeBelowMinimumCharge, Field: field, Message: fmt.Sprintf(
		"%d open or held opening(s) would be charged less than the payment provider's smallest payment in %s, %s %s (price_cents %d), "+
			"so no one who took them could pay: %s. Cancel them first (or let a held one's payment settle), or keep %s",
		rows[0].Total, code, money.Plain(minimum, n.Currency), code, minimum, list, keep)}
}

// checkCharges refuses what the payment provider could never charge, below its
// smallest charge in n's currency: a fixed deposit of a deposit shop, or a no-show or
// late-cancel fee (0 is none). A new shop's and a changed one's alike: a change of
// currency is held to the new currency's smallest charge.
func (s *Service) checkCharges(p Protection, n NewShop) error {
	if s.cfg.MinimumCharge == nil {
		return nil
	}
	minimum := s.cfg.MinimumCharge(n.Currency)
	if d := p.DepositCents; d != nil && n.PaymentMode == PaymentDeposit && *d < minimum {
		return problem.Invalidf("deposit_cents", "deposit_cents must be at least %d, the payment provider's smallest charge in %s",
			minimum, strings.ToUpper(n.Currency))
	}
	for _, fee := range []struct {
		field string
		cents int64
	}{{"no_show_fee_cents", p.NoShowFeeCents}, {"late_cancel_fee_cents", p.LateCancelFeeCents}} {
		if fee.cents > 0 && fee.cents < minimum {
			return problem.Invalidf(fee.field, "%s must be 0 (none) or at least %d, the payment provider's smallest charge in %s",
				fee.field, minimum, strings.ToUpper(n.Currency))
		}
	}
	return nil
}
