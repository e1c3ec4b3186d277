package join

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// MaxAllowedCountries is how many calling codes a shop may accept joins from besides
// its own.
const MaxAllowedCountries = 10

// AllowedCountriesField names the setting in the problems SetAllowedCountries returns.
const AllowedCountriesField = "join_countries"

// countryAllowed reports whether numbers of calling code cc may join shop's list: the
// shop's own code (its SMS number's) always, any other only when the shop added it.
func (s *Service) countryAllowed(ctx context.Context, shop shops.Shop, cc string) (bool, error) {
	if cc == "" {
		return false, nil
	}
	if cc == phone.CallingCode(shop.SMSNumber) {
		return true, nil
	}
	ok, err := queries.JoinAllowedCountryExists(ctx, s.pool, db.JoinAllowedCountryExistsParams{ShopID: shop.ID, CallingCode: cc})
	if err != nil {
		return false, fmt.Errorf("read allowed countries of shop %s: %w", shop.ID, err)
	}
	return ok, nil
}

// AllowedCountries returns the calling codes (without "+") whose numbers may join shop's
// list: the shop's own first (its SMS number's, always allowed), then those it added,
// in order.
func (s *Service) AllowedCountries(ctx context.Context, shop shops.Shop) ([]string, error) {
	extra, err := queries.JoinAllowedCountries(ctx, s.pool, shop.ID)
	if err != nil {
		return nil, fmt.Errorf("read allowed countries of shop %s: %w", shop.ID, err)
	}
	out := []string{phone.CallingCode(shop.SMSNumber)}
	for _, cc := range extra {
		if cc != out[0] {
			out = append(out, cc)
		}
	}
	return out, nil
}

// CheckAllowedCountries reads codes as SetAllowedCountries does, changing nothing: the
// calling codes besides the shop's own, sorted, or the problem SetAllowedCountries
// would answer. A caller that changes the shop too checks first and sets after, so that
// a refusal of either changes neither.
func CheckAllowedCountries(shop shops.Shop, codes []string) ([]string, error) {
	own := phone.CallingCode(shop.SMSNumber)
	var extra []string
	for _, c := range codes {
		cc, ok := ParseCallingCode(c)
		if !ok {
			return nil, problem.Invalidf(AllowedCountriesField, "%q is not a country calling code such as +44", bounded(c, 20))
		}
		if cc != own && !slices.Contains(extra, cc) {
			extra = append(extra, cc)
		}
	}
	if len(extra) > MaxAllowedCountries {
		return nil, problem.Invalidf(AllowedCountriesField, "at most %d countries besides the shop's own", MaxAllowedCountries)
	}
	slices.Sort(extra)
	return extra, nil
}

// SetAllowedCountries replaces the calling codes shop accepts joins from besides its own
// ("+44" or "44"; the shop's own may be listed and changes nothing) and returns them as
// AllowedCountries does. A code that is no country calling code, or more than
// MaxAllowedCountries others, is refused (problem.Invalid, field AllowedCountriesField)
// and changes nothing (CheckAllowedCountries).
func (s *Service) SetAllowedCountries(ctx context.Context, shop shops.Shop, codes []string) ([]string, error) {
	own := phone.CallingCode(shop.SMSNumber)
	extra, err := CheckAllowedCountries(shop, codes)
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.JoinAllowedCountriesClear(ctx, tx, shop.ID); err != nil {
			return err
		}
		for _, cc := range extra {
			if err := queries.JoinAllowedCountryAdd(ctx, tx, db.JoinAllowedCountryAddParams{ShopID: shop.ID, CallingCode: cc}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set allowed countries of shop %s: %w", shop.ID, err)
	}
	return append([]string{own}, extra...), nil
}

// ParseCallingCode reads a country calling code, with or without its "+" ("+44", "44",
// " 1 "), and returns it without: false when it is none (E.164's codes are a prefix
// code, so "4" or "440" is none, as phone.CallingCode reads them).
func ParseCallingCode(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	if len(s) < 1 || len(s) > 3 {
		return "", false
	}
	if _, err := strconv.Atoi(s); err != nil || s[0] == '0' || strings.ContainsAny(s, "+-") {
		return "", false
	}
	if phone.CallingCode("+"+s+"00000000") != s {
		return "", false
	}
	return s, true
}

func bounded(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// refused counts a refusal of shop's, on /metrics (Config.Refused) and in Postgres by
// day and reason; when the reason is the shop's spent budget, it marks the hour spent
// and, the first time in the hour, texts the owner's alert number (budgetAlert). One
// upsert a refusal: refusals are no hot path, and a pumper's burst is capped by the
// limits before it reaches here at more than a few a second.
func (s *Service) refused(ctx context.Context, shop shops.Shop, reason string) error {
	if s.cfg.Refused != nil {
		s.cfg.Refused(reason)
	}
	now := s.cfg.Now().UTC()
	day := pgtype.Date{Time: time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC), Valid: true}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.JoinRefusalCount(ctx, tx, db.JoinRefusalCountParams{ShopID: shop.ID, Day: day, Reason: reason, At: now}); err != nil {
			return fmt.Errorf("count refusal: %w", err)
		}
		if reason != refusedShopBudget {
			return nil
		}
		hour := now.Truncate(time.Hour)
		first, err := queries.JoinBudgetSpentMark(ctx, tx, db.JoinBudgetSpentMarkParams{ShopID: shop.ID, Hour: hour, At: now})
		if err != nil {
			return fmt.Errorf("mark budget spent: %w", err)
		}
		// The alert number is a confirmed one: shops.notify_phone holds a number only
		// once its code came back.
		if first == 0 || shop.NotifyPhone == "" {
			return nil
		}
		_, err = inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
			Key: "join_budget:" + shop.ID.String() + ":" + strconv.FormatInt(hour.Unix(), 10), ShopID: shop.ID,
			From: shop.SMSNumber, To: shop.NotifyPhone, Body: budgetAlert(shop, s.cfg.Limits),
			NotAfter: hour.Add(time.Hour), Shown: inbox.ShownNowhere, At: now,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("record join refusal of shop %s: %w", shop.ID, err)
	}
	return nil
}

// budgetAlert is the text to the owner when the join page's hourly budget of
// confirmation texts is spent, in the shop's language (internal/texts, beside the
// owner's other alerts).
func budgetAlert(shop shops.Shop, l Limits) string {
	return texts.In(shop.Language).JoinBudgetAlert(&shop, l.PerShop.Burst)
}

// RefusalCounts are a shop's refused join requests, for the dashboard.
type RefusalCounts struct {
	// ByReason counts them by reason (honeypot, country, shape, own_number, ip, number,
	// shop_budget, unavailable) on the days (UTC) from since's on; a reason with none is
	// absent.
	ByReason map[string]int64
	// Total is their sum.
	Total int64
	// BudgetSpentAt is the last time the shop's hourly budget of confirmation texts was
	// spent (the first refusal of that hour), at any time; nil: never.
	BudgetSpentAt *time.Time
}

// Refusals counts shop's refused join requests since since (by UTC day: the whole day
// of since counts) and says when its budget was last spent.
func (s *Service) Refusals(ctx context.Context, shopID uuid.UUID, since time.Time) (RefusalCounts, error) {
	since = since.UTC()
	day := pgtype.Date{Time: time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC), Valid: true}
	rows, err := queries.JoinRefusalsSince(ctx, s.pool, db.JoinRefusalsSinceParams{ShopID: shopID, Since: day})
	if err != nil {
		return RefusalCounts{}, fmt.Errorf("count refusals of shop %s: %w", shopID, err)
	}
	out := RefusalCounts{ByReason: map[string]int64{}}
	for _, r := range rows {
		out.ByReason[r.Reason] = r.Count
		out.Total += r.Count
	}
	at, err := queries.JoinBudgetSpentLast(ctx, s.pool, shopID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return RefusalCounts{}, fmt.Errorf("read spent budget of shop %s: %w", shopID, err)
	default:
		at = at.UTC()
		out.BudgetSpentAt = &at
	}
	return out, nil
}

// RefusalsKeep is how long the refusal counts and spent hours are kept (the
// retention's Keep for join_refusals and join_budget_spent).
const RefusalsKeep = 90 * 24 * time.Hour

// PurgeRefusals forgets up to limit day counts of refusals from the days before
// before's: the retention's batch for join_refusals.
func PurgeRefusals(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	before = before.UTC()
	day := pgtype.Date{Time: time.Date(before.Year(), before.Month(), before.Day(), 0, 0, 0, 0, time.UTC), Valid: true}
	n, err := queries.JoinRefusalsPurge(ctx, conn, db.JoinRefusalsPurgeParams{Before: day, MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge join refusal counts: %w", err)
	}
	return n, nil
}

// PurgeBudgetSpent forgets up to limit hours in which a shop's budget was spent, from
// before before: the retention's batch for join_budget_spent.
func PurgeBudgetSpent(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.JoinBudgetSpentPurge(ctx, conn, db.JoinBudgetSpentPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge join spent budgets: %w", err)
	}
	return n, nil
}
