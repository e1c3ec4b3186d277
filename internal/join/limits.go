package join

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The reasons a request is refused, as Config.Refused counts them.
const (
	refusedHoneypot    = "honeypot"
	refusedCountry     = "country"
	refusedShape       = "shape"
	refusedOwnNumber   = "own_number"
	refusedIP          = "ip"
	refusedNumber      = "number"
	refusedShopBudget  = "shop_budget"
	refusedUnavailable = "unavailable"
)

// RefusalReasons are the reasons a join request is refused, in the order they are
// checked: the keys of RefusalCounts.ByReason, for the dashboard to list.
var RefusalReasons = []string{refusedHoneypot, refusedCountry, refusedShape, refusedOwnNumber, refusedIP, refusedNumber,
	refusedShopBudget, refusedUnavailable}

// Limits are the join page's defences against SMS pumping (fraudsters farming the
// confirmation texts to numbers whose carriers pay them). Every refusal looks to the
// visitor like a text sent.
type Limits struct {
	// Limiter counts in Redis, shared by every instance (REDIS_KEY_PREFIX is its
	// prefix); nil refuses every request.
	Limiter *ratelimit.Limiter
	// PerIP is how many requests one client address may make; zero: 5 at once, then
	// one every 12 minutes (5 an hour). The address is the one the server's
	// TRUSTED_PROXIES rule finds.
	PerIP ratelimit.Limit
	// PerShop is the shop's budget of confirmation texts; zero: 30 at once, then one
	// every 2 minutes (30 an hour).
	PerShop ratelimit.Limit
	// PerNumber is how often one number may be sent a confirmation by one shop; zero:
	// once a day.
	PerNumber ratelimit.Limit
}

func (l Limits) withDefaults() Limits {
	if l.PerIP.Burst == 0 {
		l.PerIP = ratelimit.Limit{Burst: 5, Every: 12 * time.Minute}
	}
	if l.PerShop.Burst == 0 {
		l.PerShop = ratelimit.Limit{Burst: 30, Every: 2 * time.Minute}
	}
	if l.PerNumber.Burst == 0 {
		l.PerNumber = ratelimit.Limit{Burst: 1, Every: 24 * time.Hour}
	}
	return l
}

// allow returns why a submission of number to shop must not be texted ("" when it may),
// taking its events from the buckets in order: the honeypot, the country and the
// number's shape cost nothing; the address's bucket before the number's, so one address
// cannot spend many numbers' days; the number's before the shop's, so a number asking
// again spends nothing of the shop's budget. Redis unreachable refuses (reason
// unavailable, with the error): an unchecked request could be a pumper's. An error with
// no reason (Postgres could not say which countries the shop allows) is the caller's.
func (s *Service) allow(ctx context.Context, shop shops.Shop, number string, sub Submission) (string, error) {
	if sub.Honeypot != "" {
		return refusedHoneypot, nil
	}
	// The shop's own country, as its number's calling code says, and those it added:
	// foreign ranges are where pumping pays.
	allowed, err := s.countryAllowed(ctx, shop, phone.CallingCode(number))
	if err != nil {
		return "", err
	}
	if !allowed {
		return refusedCountry, nil
	}
	// Premium, toll-free and non-mobile ranges, where the number's shape tells.
	if ok, _ := phone.Textable(number); !ok {
		return refusedShape, nil
	}
	// The shop's own number: the provider refuses a text to itself.
	if number == shop.SMSNumber {
		return refusedOwnNumber, nil
	}
	lim := s.cfg.Limits
	if lim.Limiter == nil {
		return refusedUnavailable, nil
	}
	ip := "unknown"
	if sub.IP.IsValid() {
		ip = sub.IP.Unmap().String()
	}
	for _, c := range []struct {
		key    string
		limit  ratelimit.Limit
		reason string
	}{
		{ipKey(ip), lim.PerIP, refusedIP},
		{numberKey(shop, number), lim.PerNumber, refusedNumber},
		{shopKey(shop), lim.PerShop, refusedShopBudget},
	} {
		res, err := lim.Limiter.Allow(ctx, c.key, c.limit)
		if err != nil {
			return refusedUnavailable, err
		}
		if !res.Allowed {
			return c.reason, nil
		}
	}
	return "", nil
}

// ipKey, numberKey and shopKey are the limiter's keys; a number is kept hashed, never
// in the clear.
func ipKey(ip string) string { return "join:ip:" + ip }

func numberKey(shop shops.Shop, number string) string {
	h := sha256.Sum256([]byte(shop.ID.String() + ":" + number))
	return "join:number:" + hex.EncodeToString(h[:16])
}

func shopKey(shop shops.Shop) string { return "join:shop:" + shop.ID.String() }
