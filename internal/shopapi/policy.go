package shopapi

import (
	"time"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// policyRequest is offer_policy as a client sends it, to create a shop (POST
// /api/shops) or to change one (PATCH /api/shop, /api/shops/{id}): one shape, read by
// one rule into the domain's shops.PolicyFields. A field left out leaves the policy's
// value (the default, or what is stored). A null clears quiet_hours and
// max_offers_per_day; for the other fields it is the default at creation, and refused in
// a change (a stored wave size cannot become "nothing"). An explicit 0 wave size,
// interval or send rate reaches the domain, which refuses it: 0 never means the default.
type policyRequest struct {
	WaveSize              optional[int64]           `json:"wave_size"`
	WaveIntervalSeconds   optional[int64]           `json:"wave_interval_seconds"`
	MinLeadMinutes        optional[int64]           `json:"min_lead_minutes"`
	QuietHours            optional[quietHoursValue] `json:"quiet_hours"`
	CooldownSeconds       optional[int64]           `json:"cooldown_seconds"`
	MaxOffersPerDay       optional[int64]           `json:"max_offers_per_day"`
	FirstWaveDelaySeconds optional[int64]           `json:"first_wave_delay_seconds"`
	SendRatePerSecond     optional[int64]           `json:"send_rate_per_second"`
}

// fields reads the request; creating says whether a null is the default (a new shop's)
// or refused (a change's).
func (p policyRequest) fields(creating bool) (f shops.PolicyFields, err error) {
	num := func(o optional[int64], field string, limit int64) (*int64, error) {
		if creating && o.Null {
			return nil, nil
		}
		v, err := ptr(o, "offer_policy."+field)
		if v != nil {
			c := clamp(*v, limit)
			v = &c
		}
		return v, err
	}
	whole := func(o optional[int64], field string, dst **int) error {
		v, err := num(o, field, 1<<30)
		if v != nil {
			n := int(*v)
			*dst = &n
		}
		return err
	}
	seconds := func(o optional[int64], field string, unit time.Duration, dst **time.Duration) error {
		// Bounded so that v × unit cannot overflow (2^26 minutes, 2^32 seconds); the
		// domain then refuses what is out of range.
		v, err := num(o, field, min(1<<32, (1<<62)/int64(unit)))
		if v != nil {
			d := time.Duration(*v) * unit
			*dst = &d
		}
		return err
	}
	for _, e := range []error{
		whole(p.WaveSize, "wave_size", &f.WaveSize),
		whole(p.SendRatePerSecond, "send_rate_per_second", &f.SendRate),
		seconds(p.WaveIntervalSeconds, "wave_interval_seconds", time.Second, &f.WaveInterval),
		seconds(p.MinLeadMinutes, "min_lead_minutes", time.Minute, &f.MinLead),
		seconds(p.CooldownSeconds, "cooldown_seconds", time.Second, &f.Cooldown),
		seconds(p.FirstWaveDelaySeconds, "first_wave_delay_seconds", time.Second, &f.FirstWaveDelay),
	} {
		if e != nil {
			return f, e
		}
	}
	if q := p.QuietHours; q.Set {
		f.QuietSet = true // null: none
		if !q.Null {
			if f.Quiet, err = q.Value.parse(); err != nil {
				return f, err
			}
		}
	}
	if c := p.MaxOffersPerDay; c.Set {
		n := 0 // null: no cap
		if !c.Null {
			if n, err = dailyCap(c.Value); err != nil {
				return f, err
			}
		}
		f.MaxOffersPerDay = &n
	}
	return f, nil
}
