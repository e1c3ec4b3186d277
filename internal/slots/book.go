package slots

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

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Outcome is how a claim on a slot ended.
type Outcome string

// Claim outcomes.
const (
	// Booked: this customer holds the slot now.
	Booked Outcome = "booked"
	// Taken: someone else got it first, or it is no longer bookable.
	Taken Outcome = "taken"
	// NoOffer: the customer holds no offer that could be claimed.
	NoOffer Outcome = "no_offer"
)

// ErrUnavailable means the lock service or the database could not be reached: no booking
// was made and the customer should try again shortly ("fail closed").
var ErrUnavailable = problem.New(problem.Unavailable, "unavailable", "booking is unavailable for a moment")

// Claim is the result of a customer's YES.
type Claim struct {
	Outcome   Outcome
	OpeningID uuid.UUID
	BookingID uuid.UUID
	StartsAt  time.Time
	Service   string
	// StaffName is the person whose time is booked ("" for anyone's), for the answer.
	StaffName  string
	PriceCents int64
	// Booking is the booking this claim has just committed (Outcome Booked, not Repeat);
	// the zero value otherwise. Its payment link is the caller's to make (internal/ledger
	// makes it; internal/inbound stores it with its answer): slots never sees a payment.
	Booking db.Booking
	// PaymentURL is the held booking's payment link, when it has one.
	PaymentURL string
	// LinkFollows means the booking holds but has no link yet: a job makes it and texts it.
	LinkFollows bool
	// Confirmed means the booking needs no (more) payment.
	Confirmed bool
	// Repeat means this customer already held the slot: the answer repeats the booking.
	Repeat bool
	// settled, when not nil, is closed once the work a new booking set going beside the
	// caller's next step is done (see Settle).
	settled <-chan struct{}
	// rest is what a booking made in the caller's transaction (ClaimTx) leaves of its
	// opening, for Committed.
	rest rest
}

// New reports whether the claim has just booked the slot (not a repeat): its payment
// link, when the shop takes payments, is still to be made.
func (c *Claim) New() bool { return c.Outcome == Booked && !c.Repeat && c.Booking.ID != uuid.Nil }

// Settle returns once what a new booking set going in the background is done: the slot
// lock's release (with its notice to the claims waiting on it) and the customer's
// cooldown. A caller makes the payment link meanwhile (each of those round trips cost a
// winner ~10 ms on a busy machine, and winners' answers were the p99), then settles
// before it answers, so the answer never runs ahead of them.
func (c *Claim) Settle() {
	if c.settled != nil {
		<-c.settled
	}
}

// Book gives the customer a slot they hold a live offer for, if one is still free: the
// newest offer's slot first, then older ones (two chairs free at 15:00 are two slots).
// It answers Taken only when none of them can be booked by this customer any more.
//
// Claims on one slot key (shop and start) are serialised by the Redis lock, so that a
// storm of replies queues in Redis rather than on a Postgres row; within one instance
// the contenders take turns to ask Redis (turns.go). A contender that finds the lock
// held waits for the holder's release notice, which names the openings the holder found
// or left decided: if those are all of the contender's, it is told Taken at once,
// without touching Postgres; otherwise it tries again. The wait is bounded
// (LockWait): a holder that died keeps its key until the TTL, and then Postgres decides
// alone. Whatever Redis says, one transaction per attempt locks the opening row, rechecks
// that it is open, before the cutoff and that the offer is live, and writes the booking,
// whose partial unique index is the final fence. The payment link is made after the
// commit, by the caller (Claim.Booking), so a slow payment provider never holds the row
// lock or the slot lock.
func (s *Service) Book(ctx context.Context, shop *shops.Shop, customerID uuid.UUID) (*Claim, error) {
	c, err := s.Claimable(ctx, shop, customerID)
	if err != nil {
		return nil, err
	}
	return s.BookClaimable(ctx, shop, customerID, c)
}

// Claimable reads what a YES from the customer could claim now: their live offers from
// the shop, newest first, and, when there are none, their newest offer that may have
// reached them (not queued, not failed). An error wraps ErrUnavailable.
func (s *Service) Claimable(ctx context.Context, shop *shops.Shop, customerID uuid.UUID) (Claimable, error) {
	rows, err := queries.OfferListClaimable(ctx, s.pool, db.OfferListClaimableParams{CustomerID: customerID, ShopID: shop.ID})
	if err != nil {
		return Claimable{}, fmt.Errorf("find claimable offers: %w: %w", ErrUnavailable, err)
	}
	var c Claimable
	for _, r := range rows {
		c.Live = append(c.Live, LiveOffer{OfferID: r.OfferID, OpeningID: r.OpeningID, Generation: r.Generation, StartsAt: r.StartsAt,
			EventFacts: r.EventFacts, MoveFrom: r.MoveFrom})
	}
	if len(c.Live) == 0 {
		last, err := queries.OfferNewestForCustomer(ctx, s.pool, customerID)
		if errors.Is(err, pgx.ErrNoRows) {
			return c, nil
		}
		if err != nil {
			return Claimable{}, fmt.Errorf("find newest offer: %w: %w", ErrUnavailable, err)
		}
		c.NewestOfferID, c.NewestStatus = last.ID, last.Status
	}
	return c, nil
}

// Claimable is what a customer's YES can claim, as read when the text arrived (see
// Book).
type Claimable struct {
	// Live are the customer's offers from the shop that can still be taken, newest
	// first.
	Live []LiveOffer
	// NewestOfferID and NewestStatus are the customer's newest offer that may have
	// reached them (not queued, not failed); they tell a late YES ("taken") from one with
	// nothing behind it when Live is empty.
	NewestOfferID uuid.UUID
	NewestStatus  string
	// NewestKeeps, when the newest offer is a move-up whose booking still stands, is
	// that booking's start: a late YES to it is told the booking stays. Zero otherwise
	// (and when not read: Claimable leaves it zero).
	NewestKeeps time.Time
}

// LiveOffer is an offer that can still be taken.
type LiveOffer struct {
	OfferID, OpeningID uuid.UUID
	Generation         int32
	StartsAt           time.Time
	// EventFacts, read with the offer only when the shop has an endpoint subscribed to
	// a claim's webhook events, are what the claim renders their data from
	// (hooks.ClaimData); nil otherwise: no event to record.
	EventFacts []byte
	// MoveFrom is a move-up offer's appointment, the customer's later booking that
	// taking it moves (internal/book's MoveUp books it); invalid for a plain offer.
	MoveFrom uuid.NullUUID
}

// Plain returns the offers that are not move-ups: what Book and BookClaimable book. A
// move-up moves an appointment of the book in the booking's transaction, which is
// internal/book's (MoveUp).
func Plain(offers []LiveOffer) []LiveOffer {
	i := slices.IndexFunc(offers, func(o LiveOffer) bool { return o.MoveFrom.Valid })
	if i < 0 {
		return offers // the YES path's usual case: no copy
	}
	out := slices.Clone(offers[:i])
	for _, o := range offers[i+1:] {
		if !o.MoveFrom.Valid {
			out = append(out, o)
		}
	}
	return out
}

// BookClaimable is Book for a caller that has already read what the customer can claim
// (the inbound path reads it in the statement that stores the text). The caller settles
// a new booking's Claim before it answers (Claim.Settle).
//
// Move-up offers (LiveOffer.MoveFrom) are left out: booking one here would leave the
// appointment it replaces booked. A customer holding only move-up offers gets NoOffer.
func (s *Service) BookClaimable(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, c Claimable) (*Claim, error) {
	if len(c.Live) == 0 {
		cl, err := s.noClaimable(ctx, c)
		return &cl, err
	}
	live := Plain(c.Live)
	if len(live) == 0 {
		return &Claim{Outcome: NoOffer, OpeningID: c.Live[0].OpeningID}, nil
	}
	deadline := time.Now().Add(s.cfg.LockWait)
	result := &attempt{claim: Claim{Outcome: NoOffer, OpeningID: live[0].OpeningID}}
	for _, g := range bySlot(live) {
		a, err := s.claimSlot(ctx, shop, customerID, g, deadline)
		if err != nil {
			return nil, err
		}
		if a.claim.Outcome == Booked {
			if a.claim.Repeat {
				return &a.claim, nil // nothing new was booked: the same answer again
			}
			booked := s.booked(ctx, shop, customerID, a)
			return &booked, nil
		}
		if a.claim.Outcome == Taken && result.claim.Outcome != Taken {
			result = a
		}
	}
	return &result.claim, nil
}

// slot is the live offers of one customer that share a lock key.
type slot struct {
	startsAt time.Time
	offers   []LiveOffer
}

// bySlot groups offers by start time, keeping the newest-first order of their first
// appearance.
func bySlot(offers []LiveOffer) []slot {
	var out []slot
	index := map[time.Time]int{}
	for _, o := range offers {
		at := o.StartsAt.UTC().Truncate(time.Second)
		i, ok := index[at]
		if !ok {
			i = len(out)
			index[at] = i
			out = append(out, slot{startsAt: at})
		}
		out[i].offers = append(out[i].offers, o)
	}
	return out
}

// attempt is how trying one slot's offers ended.
type attempt struct {
	claim   Claim
	booking db.Booking
	rest    rest
	// decided lists the openings found (or left) no longer bookable, for the release
	// notice.
	decided []string
	// released, when not nil, is closed once the slot lock of a new booking is released
	// (see claimSlot).
	released <-chan struct{}
}

// rest is what a new booking leaves of its opening: the opening lasts whole minutes of
// staffID's time, the booking booked of them from its start.
type rest struct {
	whole, booked int
	staffID       uuid.NullUUID
}

// claimSlot tries the customer's offers for one slot key under its lock, waiting for the
// current holder's decision when the lock is held (see Book). This instance's
// contenders for the key take turns to ask Redis (turns.go).
func (s *Service) claimSlot(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, g slot, deadline time.Time) (*attempt, error) {
	key := s.cfg.KeyPrefix + LockKey(shop.ID, g.startsAt)
	taken := &attempt{claim: Claim{Outcome: Taken, OpeningID: g.offers[0].OpeningID}}
	// What recent holders of this slot decided answers most of a storm's late replies
	// without the lock or Postgres: a decided (opening, generation) never becomes
	// bookable again (a reopen starts a new generation).
	pending := g.offers
	for _, note := range s.locker.Recent(key) {
		pending = undecided(pending, note)
	}
	if len(pending) == 0 {
		return taken, nil
	}
	// Watch before anything else, so that no release from now on is missed.
	notes, stop := s.locker.Watch(key)
	defer stop()
	t := s.turns.join(key)
	defer s.turns.leave(key)
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	mine := false
	defer func() {
		if mine {
			t.free <- struct{}{}
		}
	}()
	for {
		if !mine {
			select {
			case <-t.free:
				mine = true
				// What this instance's holders decided, and the notices that came
				// meanwhile (a notice can be dropped while its reader is busy).
				for _, note := range slices.Concat(s.turns.notes(t), s.locker.Recent(key)) {
					pending = undecided(pending, note)
				}
				if len(pending) == 0 {
					return taken, nil
				}
			case note := <-notes:
				if pending = undecided(pending, note); len(pending) == 0 {
					return taken, nil
				}
				continue
			case <-wait.C:
				return s.withoutLock(ctx, shop, customerID, pending)
			case <-ctx.Done():
				return nil, fmt.Errorf("wait for slot lock: %w: %w", ErrUnavailable, ctx.Err())
			}
		}
		release, err := s.locker.TryLock(ctx, key, s.cfg.LockTTL)
		if err == nil {
			a, err := s.tryOffers(ctx, shop, customerID, pending)
			note := strings.Join(a.decided, ",")
			s.turns.decide(t, note)
			if err == nil && a.claim.Outcome == Booked && !a.claim.Repeat {
				// The booking is committed: the winner's link need not wait behind the
				// release's round trip (each hop cost a winner ~10 ms on a busy machine,
				// and winners' answers were the p99). BookClaimable waits for it.
				done := make(chan struct{})
				go func() {
					defer close(done)
					release(note)
				}()
				a.released = done
				return a, nil
			}
			release(note)
			return a, err
		}
		if !errors.Is(err, ErrLockHeld) {
			return nil, fmt.Errorf("lock slot: %w: %w", ErrUnavailable, err)
		}
		// Another instance holds the key: wait for its decision, keeping the turn so
		// that this instance's other contenders do not ask Redis meanwhile.
		select {
		case note := <-notes:
			if pending = undecided(pending, note); len(pending) == 0 {
				return taken, nil
			}
		case <-wait.C:
			return s.withoutLock(ctx, shop, customerID, pending)
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for slot lock: %w: %w", ErrUnavailable, ctx.Err())
		}
	}
}

// withoutLock books when the wait for the lock ran out: the holder is slow, or died and
// left its key until the TTL. Postgres's row lock and unique index decide without the
// lock.
func (s *Service) withoutLock(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, pending []LiveOffer) (*attempt, error) {
	s.log.WarnContext(ctx, "slot lock still held after the wait; booking without it", "wait", s.cfg.LockWait)
	return s.tryOffers(ctx, shop, customerID, pending)
}

// undecided drops the offers whose opening and generation the release note names as
// decided.
func undecided(offers []LiveOffer, note string) []LiveOffer {
	if note == "" {
		return offers
	}
	decided := strings.Split(note, ",")
	var out []LiveOffer
	for _, o := range offers {
		if !slices.Contains(decided, decidedEntry(o)) {
			out = append(out, o)
		}
	}
	return out
}

// decidedEntry names an offer's opening and generation in a release note.
func decidedEntry(o LiveOffer) string {
	return o.OpeningID.String() + ":" + strconv.Itoa(int(o.Generation))
}

// tryOffers tries the offers in order, one transaction each, until one books.
func (s *Service) tryOffers(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, offers []LiveOffer) (*attempt, error) {
	res := &attempt{claim: Claim{Outcome: NoOffer, OpeningID: offers[0].OpeningID}}
	for _, o := range offers {
		a, err := s.tryOffer(ctx, shop, customerID, o)
		if err != nil {
			return res, err
		}
		if a.claim.Outcome == Booked {
			a.decided = res.decided
			if !a.claim.Repeat {
				// A repeat leaves this opening open for others: it is not decided.
				a.decided = append(a.decided, decidedEntry(o))
			}
			return a, nil
		}
		if a.claim.Outcome == Taken {
			res.decided = append(res.decided, decidedEntry(o))
			if res.claim.Outcome != Taken {
				res.claim = a.claim
			}
		}
	}
	return res, nil
}

// tryOffer books one offer's opening for the customer if it is still free: one
// statement (BookingClaim) under the opening's row lock.
func (s *Service) tryOffer(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, offer LiveOffer) (*attempt, error) {
	now := s.cfg.Now()
	a := &attempt{claim: Claim{OpeningID: offer.OpeningID}}
	p := s.claimParams(shop, customerID, offer, now)
	if offer.EventFacts != nil {
		// The shop has an endpoint for the claim's events: their data is rendered now,
		// for a booking id chosen here, and the claim records it only if it books.
		p.BookingID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
		data, err := hooks.ClaimData(offer.EventFacts, p.BookingID.UUID, p.ConfirmedAt != nil, now)
		if err != nil {
			return nil, fmt.Errorf("book opening %s: %w: %w", offer.OpeningID, ErrUnavailable, err)
		}
		p.EventData = data
	}
	// One statement, so no transaction of its own: it commits or changes nothing.
	err := s.claimOn(ctx, s.pool, shop, customerID, offer, p, a)
	if err != nil {
		return nil, fmt.Errorf("book opening %s: %w: %w", offer.OpeningID, ErrUnavailable, err)
	}
	return a, nil
}

// ClaimTx books offer's opening for the customer in the caller's transaction tx, as a
// YES does (the same statement and checks, without the slot lock: the opening's row
// lock and the bookings' unique index decide): internal/book's MoveUp, which moves the
// customer's appointment in the same transaction. Outcome Booked carries the booking
// (Claim.Booking) and Confirmed; Taken or NoOffer change nothing. After its commit the
// booking is finished (Committed) and its payment link made, as for any booking.
func (s *Service) ClaimTx(ctx context.Context, tx pgx.Tx, shop shops.Shop, customerID uuid.UUID, offer LiveOffer) (Claim, error) {
	now := s.cfg.Now()
	a := attempt{claim: Claim{OpeningID: offer.OpeningID}}
	p := s.claimParams(&shop, customerID, offer, now)
	if offer.EventFacts != nil {
		p.BookingID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
		data, err := hooks.ClaimData(offer.EventFacts, p.BookingID.UUID, p.ConfirmedAt != nil, now)
		if err != nil {
			return Claim{}, fmt.Errorf("book opening %s: %w", offer.OpeningID, err)
		}
		p.EventData = data
	}
	if err := s.claimOn(ctx, tx, &shop, customerID, offer, p, &a); err != nil {
		return Claim{}, fmt.Errorf("book opening %s: %w", offer.OpeningID, err)
	}
	c := a.claim
	if c.Outcome == Booked && !c.Repeat {
		c.Booking, c.BookingID = a.booking, a.booking.ID
		c.Confirmed = shop.PaymentMode == shops.PaymentNone
		c.rest = a.rest
	}
	return c, nil
}

// Committed finishes a booking ClaimTx made once the caller's transaction has committed,
// as a YES's booking is finished: the rest of a longer opening declared and the
// customer's cooldown set in the background (the caller settles the claim it returns,
// Claim.Settle, before it answers). A claim that booked nothing is returned as it is.
func (s *Service) Committed(ctx context.Context, shop shops.Shop, customerID uuid.UUID, c Claim) Claim {
	if !c.New() {
		return c
	}
	return s.booked(ctx, &shop, customerID, &attempt{claim: c, booking: c.Booking, rest: c.rest})
}

// claimParams are BookingClaim's parameters for the customer's claim of offer at now.
func (s *Service) claimParams(shop *shops.Shop, customerID uuid.UUID, offer LiveOffer, now time.Time) db.BookingClaimParams {
	p := db.BookingClaimParams{
		OfferID: offer.OfferID, CustomerID: customerID, Now: now.UTC(), OpeningID: offer.OpeningID,
		Generation: offer.Generation, StartsAfter: now.Add(shop.Policy.MinLead).UTC(), ShopID: shop.ID, Currency: shop.Currency,
	}
	if shop.PaymentMode == shops.PaymentNone {
		t := now.UTC()
		p.ConfirmedAt = &t // confirmed at once: the statement inserts it so
	} else {
		exp := now.Add(CheckoutHold).UTC().Truncate(time.Second)
		p.CheckoutExpiresAt = &exp
	}
	return p
}

// claimOn runs the claim p of offer on q (the pool: one statement; or a transaction)
// and writes its outcome into a.
func (s *Service) claimOn(ctx context.Context, q db.DBTX, shop *shops.Shop, customerID uuid.UUID, offer LiveOffer, p db.BookingClaimParams, a *attempt) error {
	now := p.Now
	row, err := queries.BookingClaim(ctx, q, p)
	for try := 1; pgcode.Deadlock(err) && try < claimTries; try++ {
		// Two claims of one person's overlapping time each wait for the other's
		// booking at the exclusion constraint (Postgres checks it after inserting,
		// so each can see the other's): Postgres cancels one. The statement changed
		// nothing; run again, it meets the other's committed booking (taken).
		row, err = queries.BookingClaim(ctx, q, p)
	}
	if isFenceViolation(err) {
		// The fence held: a live booking exists although the opening looked open, or
		// the person's time is booked already by an overlapping one.
		a.claim.Outcome = Taken
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Nothing changed. Taken, unless the opening is still open for this offer's
		// generation (then the offer was declined or withdrawn, or its customer opted
		// out, since it was read).
		op, err := queries.OpeningGet(ctx, q, offer.OpeningID)
		if err != nil {
			return fmt.Errorf("read opening: %w", err)
		}
		a.claim.Outcome = Taken
		if op.Status == StatusOpen && op.Generation == offer.Generation && now.Before(shop.Cutoff(op.StartsAt)) {
			a.claim.Outcome = NoOffer
			// Or the customer already holds another chair at this time (a second YES
			// while holding offers for several): the same answer as their booking's.
			held, err := queries.BookingLiveForCustomerAt(ctx, q, db.BookingLiveForCustomerAtParams{OpeningID: offer.OpeningID, CustomerID: customerID})
			if err == nil {
				a.claim = repeatClaim(db.OfferAcceptedBookingRow(held))
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("read customer's booking: %w", err)
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim opening: %w", err)
	}
	a.claim.StartsAt, a.claim.Service, a.claim.PriceCents = row.StartsAt.UTC(), row.Service, row.PriceCents
	a.claim.StaffName = row.StaffName
	a.booking = row.Booking
	a.rest = rest{whole: int(row.OpeningMinutes), booked: int(row.Booking.DurationMinutes.Int32), staffID: row.OpeningStaffID}
	// If the answer to this YES never reaches the customer, or the payment
	// provider is down, or this process dies before the link is stored, the
	// payment ledger's booking sweep finds the booking and finishes it: nothing
	// more to write here.
	a.claim.Outcome = Booked
	return nil
}

// claimTries is how many times a claim is run when Postgres cancels it to break a
// deadlock (see tryOffer).
const claimTries = 3

// booked finishes a booking that Postgres has committed: the cooldown, set in the
// background beside the slot lock's release (a.released); Claim.Settle waits for both.
// A shop that takes no payment has its booking confirmed already, and so has a claim
// its caller confirmed in the claim's transaction (a YES booking's move-up, whose
// payment moved with it: Committed keeps Claim.Confirmed).
func (s *Service) booked(ctx context.Context, shop *shops.Shop, customerID uuid.UUID, a *attempt) Claim {
	claim := a.claim
	claim.Booking, claim.BookingID = a.booking, a.booking.ID
	if a.rest.booked > 0 && a.rest.booked < a.rest.whole {
		// The rest of the person's freed time is offered at once. The booking stands
		// whatever becomes of this.
		if err := s.declareRest(ctx, shop, a.booking.OpeningID, claim.StartsAt, a.rest); err != nil {
			s.log.WarnContext(ctx, "rest of an opening not declared", "opening_id", a.booking.OpeningID, "err", err)
		}
	}
	claim.Confirmed = claim.Confirmed || shop.PaymentMode == shops.PaymentNone
	settled := make(chan struct{})
	claim.settled = settled
	// The goroutine outlives the call: it takes what it needs, not shop and a (which
	// stay on the caller's stack).
	cooldown, released := shop.Policy.Cooldown, a.released
	go func() {
		defer close(settled)
		// The cooldown is a courtesy (fewer texts to someone who just booked); a failure
		// to set it must not undo a booking that Postgres has already committed.
		if cooldown > 0 {
			if err := s.cooldowns.Start(context.WithoutCancel(ctx), customerID.String(), cooldown); err != nil {
				s.log.WarnContext(ctx, "cooldown not set", "customer_id", customerID, "err", err)
			}
		}
		if released != nil {
			<-released
		}
	}()
	return claim
}

// lateStatuses are the states of a customer's newest offer that make a YES with no live
// offer behind it a late one, which can only be told Taken: lost to another customer,
// or still out while its opening was filled or went away.
var lateStatuses = []string{"lost", "sent", "sending"}

// LateStatuses returns the states of a customer's newest offer that make a YES with no
// live offer a late one (Taken): the inbound path gives them to the statement that
// stores a storm's texts, which answers those YES as it stores them.
func LateStatuses() []string { return slices.Clone(lateStatuses) }

// noClaimable tells a late YES (the customer had an offer, now lost or gone) from a YES
// with nothing behind it.
func (s *Service) noClaimable(ctx context.Context, c Claimable) (Claim, error) {
	switch {
	case slices.Contains(lateStatuses, c.NewestStatus):
		return Claim{Outcome: Taken}, nil
	case c.NewestStatus == "accepted":
		// The winner saying YES again (the first answer was slow or lost): the same
		// answer, with the link if there is one.
		b, err := queries.OfferAcceptedBooking(ctx, s.pool, c.NewestOfferID)
		if errors.Is(err, pgx.ErrNoRows) {
			return Claim{Outcome: NoOffer}, nil
		}
		if err != nil {
			return Claim{}, fmt.Errorf("find booking of accepted offer: %w: %w", ErrUnavailable, err)
		}
		return repeatClaim(b), nil
	default:
		return Claim{Outcome: NoOffer}, nil
	}
}

// repeatClaim answers a YES from a customer who already holds the booking b.
func repeatClaim(b db.OfferAcceptedBookingRow) Claim {
	return Claim{
		Outcome: Booked, Repeat: true, OpeningID: b.OpeningID, BookingID: b.ID,
		StartsAt: b.StartsAt.UTC(), Service: b.Service, StaffName: b.StaffName, PaymentURL: b.PaymentUrl.String,
		LinkFollows: !b.Confirmed && !b.PaymentUrl.Valid,
		Confirmed:   b.Confirmed,
	}
}

// isFenceViolation reports whether Postgres refused a booking: a second live booking
// of one opening (unique_violation) or of one person's overlapping time
// (exclusion_violation).
func isFenceViolation(err error) bool {
	return pgcode.Unique(err) || pgcode.Exclusion(err)
}
