package shops

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// The payment modes of no-show protection (issue 48), beside PaymentCheckout and
// PaymentNone: PaymentDeposit takes a part of the price at the YES (Protection's
// deposit), the rest being the shop's at the visit; PaymentCard takes nothing at the YES
// and keeps the customer's card on the shop's connected account for a fee later.
const (
	PaymentDeposit = "deposit"
	PaymentCard    = "card"
)

// Bounds of the protection settings, as migration 0085's CHECKs have them.
const (
	MaxPolicyLen       = 500
	MaxLateCancelHours = 720
	// MaxFeeCents is the largest fee: Stripe's largest charge (eight digits, in the
	// currency's smallest unit).
	MaxFeeCents = 99_999_999
	// defaultLateCancelHours is a new shop's, as the column's DEFAULT has it.
	defaultLateCancelHours = 24
)

// Protection is a shop's no-show protection: the deposit, whether a paying customer's
// card is kept, and the cancellation policy with its fees. PolicyVersion moves on with
// every change of the policy's text, hours or fees, so a booking's accepted version
// names one policy.
type Protection struct {
	// DepositCents is a fixed deposit, DepositPercent a share of the price (1 to 100);
	// a deposit shop has exactly one of them.
	DepositCents   *int64
	DepositPercent *int
	// KeepCard keeps the card a checkout or deposit customer pays with, for a fee.
	KeepCard bool
	// Policy is the cancellation policy in the shop's language (at most MaxPolicyLen
	// characters), shown on the payment page; LateCancelHours before the start is when
	// a cancellation becomes late.
	Policy          string
	LateCancelHours int
	// NoShowFeeCents and LateCancelFeeCents are the fees charged to a kept card (0: none).
	NoShowFeeCents, LateCancelFeeCents int64
	PolicyVersion                      int
}

// ProtectionChange is an owner's edit of the protection settings; nil fields stay as they
// are. A deposit is nullable: DepositCentsSet with a nil DepositCents removes it.
type ProtectionChange struct {
	DepositCents                       *int64
	DepositCentsSet                    bool
	DepositPercent                     *int
	DepositPercentSet                  bool
	KeepCard                           *bool
	Policy                             *string
	LateCancelHours                    *int
	NoShowFeeCents, LateCancelFeeCents *int64
}

// UsesCheckout reports whether the shop's customers go through a payment page at the YES
// (to pay the price or a deposit, or only to leave a card): every mode but none.
func (s Shop) UsesCheckout() bool {
	switch s.PaymentMode {
	case PaymentCheckout, PaymentDeposit, PaymentCard:
		return true
	}
	return false
}

// KeepsCard reports whether the shop's payment page keeps the customer's card for a fee.
func (s Shop) KeepsCard() bool {
	return s.PaymentMode == PaymentCard || (s.Protection.KeepCard && (s.PaymentMode == PaymentCheckout || s.PaymentMode == PaymentDeposit))
}

// Charge is what the shop's payment page charges at the YES for a service priced
// price: the price (checkout), the deposit (deposit: the fixed amount, at most the price,
// or the share rounded to the nearest unit, at least 1), or nothing (card, none).
func (s Shop) Charge(price int64) int64 {
	switch s.PaymentMode {
	case PaymentCheckout:
		return price
	case PaymentDeposit:
		p := s.Protection
		switch {
		case p.DepositCents != nil:
			return min(*p.DepositCents, price)
		case p.DepositPercent != nil:
			return max(min((price*int64(*p.DepositPercent)+50)/100, price), min(1, price))
		}
		return price
	}
	return 0
}

// PolicySHA256 is the hex SHA-256 of a policy's text: what a booking's acceptance
// record names it by.
func PolicySHA256(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// protectionOf reads a stored shop's protection.
func protectionOf(r *db.Shop) Protection {
	p := Protection{KeepCard: r.KeepCard, Policy: r.CancellationPolicy, LateCancelHours: int(r.LateCancelHours),
		NoShowFeeCents: r.NoShowFeeCents, LateCancelFeeCents: r.LateCancelFeeCents, PolicyVersion: int(r.PolicyVersion)}
	if r.DepositCents.Valid {
		v := r.DepositCents.Int64
		p.DepositCents = &v
	}
	if r.DepositPercent.Valid {
		v := int(r.DepositPercent.Int32)
		p.DepositPercent = &v
	}
	return p
}

// apply applies ch to cur's protection for a shop that will be in mode, checks the
// result, and moves the policy's version on when its text, hours or fees changed.
// connect says whether shops are paid on their own connected accounts (where a kept
// card lives: never on the platform's).
func (ch ProtectionChange) apply(cur Protection, mode string, connect bool) (Protection, error) {
	n := cur
	if ch.DepositCentsSet {
		n.DepositCents = ch.DepositCents
		if ch.DepositCents != nil && !ch.DepositPercentSet {
			n.DepositPercent = nil
		}
	}
	if ch.DepositPercentSet {
		n.DepositPercent = ch.DepositPercent
		if ch.DepositPercent != nil && !ch.DepositCentsSet {
			n.DepositCents = nil
		}
	}
	if ch.KeepCard != nil {
		n.KeepCard = *ch.KeepCard
	}
	if ch.Policy != nil {
		n.Policy = *ch.Policy
	}
	if ch.LateCancelHours != nil {
		n.LateCancelHours = *ch.LateCancelHours
	}
	if ch.NoShowFeeCents != nil {
		n.NoShowFeeCents = *ch.NoShowFeeCents
	}
	if ch.LateCancelFeeCents != nil {
		n.LateCancelFeeCents = *ch.LateCancelFeeCents
	}
	switch {
	case n.DepositCents != nil && n.DepositPercent != nil:
		return Protection{}, problem.Invalidf("deposit_cents", "give deposit_cents or deposit_percent, not both (set the other to null)")
	case n.DepositCents != nil && *n.DepositCents <= 0:
		return Protection{}, problem.Invalidf("deposit_cents", "deposit_cents must be positive, or null")
	case n.DepositPercent != nil && (*n.DepositPercent < 1 || *n.DepositPercent > 100):
		return Protection{}, problem.Invalidf("deposit_percent", "deposit_percent must be between 1 and 100, or null")
	case mode == PaymentDeposit && n.DepositCents == nil && n.DepositPercent == nil:
		return Protection{}, problem.Invalidf("deposit_cents", "payment_mode deposit needs deposit_cents or deposit_percent")
	case !utf8.ValidString(n.Policy) || utf8.RuneCountInString(n.Policy) > MaxPolicyLen:
		return Protection{}, problem.Invalidf("cancellation_policy", "cancellation_policy must be text of at most %d characters", MaxPolicyLen)
	case n.LateCancelHours < 0 || n.LateCancelHours > MaxLateCancelHours:
		return Protection{}, problem.Invalidf("late_cancel_hours", "late_cancel_hours must be between 0 and %d", MaxLateCancelHours)
	case n.NoShowFeeCents < 0 || n.NoShowFeeCents > MaxFeeCents:
		return Protection{}, problem.Invalidf("no_show_fee_cents", "no_show_fee_cents must be 0 (none) or positive, at most %d", MaxFeeCents)
	case n.LateCancelFeeCents < 0 || n.LateCancelFeeCents > MaxFeeCents:
		return Protection{}, problem.Invalidf("late_cancel_fee_cents", "late_cancel_fee_cents must be 0 (none) or positive, at most %d", MaxFeeCents)
	case (n.NoShowFeeCents > 0 || n.LateCancelFeeCents > 0) && strings.TrimSpace(n.Policy) == "":
		// The policy is what the payment page shows and the customer accepts: a fee
		// nobody was shown is not charged to anyone.
		return Protection{}, problem.Invalidf("cancellation_policy", "a no-show or late-cancel fee needs a cancellation_policy saying it: it is what the payment page shows the customer, who accepts it by paying")
	}
	keeps := mode == PaymentCard || (n.KeepCard && (mode == PaymentCheckout || mode == PaymentDeposit))
	if keeps && !connect {
		field := "keep_card"
		if mode == PaymentCard {
			field = "payment_mode"
		}
		return Protection{}, problem.Invalidf(field, "a kept card lives on the shop's own Stripe account: it needs STRIPE_CONNECT=on")
	}
	if n.Policy != cur.Policy || n.LateCancelHours != cur.LateCancelHours ||
		n.NoShowFeeCents != cur.NoShowFeeCents || n.LateCancelFeeCents != cur.LateCancelFeeCents {
		n.PolicyVersion = cur.PolicyVersion + 1
	}
	return n, nil
}

// protectionParams are ShopSetProtection's parameters for shop id's protection p.
func protectionParams(id uuid.UUID, p Protection) db.ShopSetProtectionParams {
	out := db.ShopSetProtectionParams{ID: id, KeepCard: p.KeepCard, CancellationPolicy: p.Policy,
		LateCancelHours: int32(p.LateCancelHours), NoShowFeeCents: p.NoShowFeeCents,
		LateCancelFeeCents: p.LateCancelFeeCents, PolicyVersion: int32(p.PolicyVersion)}
	if p.DepositCents != nil {
		out.DepositCents = pgtype.Int8{Int64: *p.DepositCents, Valid: true}
	}
	if p.DepositPercent != nil {
		out.DepositPercent = pgtype.Int4{Int32: int32(*p.DepositPercent), Valid: true}
	}
	return out
}
