// Package texts is where every SMS the customers read gets its wording: the offers, the
// answers to their replies, and the booking's transactional texts (payment link,
// confirmation, lapsed hold, refunds). Keeping them together keeps their tone the same
// and lets a change of wording be reviewed in one place.
//
// Every text starts with the shop's name (customers get texts from many senders), says
// the day and time in the shop's local time (shops.Shop.When), writes amounts with
// internal/money, and aims to fit one GSM-7 segment for typical names.
package texts

import (
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Offer is the offer SMS: shop, service, local day and time, price, how to book and how
// to stop.
func Offer(shop shops.Shop, service string, startsAt time.Time, price int64) string {
	return fmt.Sprintf("%s: %s opening %s, %s. Reply YES to book. STOP to opt out",
		shop.Name, service, shop.When(startsAt), money.Format(price, shop.Currency))
}

// Link carries a payment link: the answer to a winning YES, or the text that follows
// when the link could not be made in time. payWithin is how long the customer has to
// pay (see Duration).
func Link(shop shops.Shop, service string, startsAt time.Time, url string, payWithin time.Duration) string {
	return fmt.Sprintf("%s: %s %s is yours! Pay within %s to keep it: %s",
		shop.Name, service, shop.When(startsAt), Duration(payWithin), url)
}

// BookedLinkFollows answers a winning YES whose payment link is not ready yet.
func BookedLinkFollows(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: %s %s is yours! Your payment link is on its way in a separate text.",
		shop.Name, service, shop.When(startsAt))
}

// Confirmed tells a customer they are booked (the payment went through, or the shop
// takes no payment).
func Confirmed(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: you're booked for %s %s. See you then!",
		shop.Name, service, shop.When(startsAt))
}

// Lapsed tells a customer their hold ended because the payment did not go through.
func Lapsed(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: your hold on %s %s has lapsed because the payment didn't go through. You have not been charged.",
		shop.Name, service, shop.When(startsAt))
}

// Refunded tells a customer their late payment was refunded.
func Refunded(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: sorry, your payment for %s %s arrived after the slot had gone to someone else. We've refunded it in full.",
		shop.Name, service, shop.When(startsAt))
}

// DuplicateRefunded tells a customer that a second payment for a slot they had already
// paid for was refunded.
func DuplicateRefunded(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: you paid twice for %s %s. We've refunded the second payment in full; you're still booked.",
		shop.Name, service, shop.When(startsAt))
}

// Taken answers a YES that came too late.
func Taken(shop shops.Shop) string {
	return shop.Name + ": sorry, that slot was just taken. We'll text you when another opens up."
}

// NoOffer answers a YES from a customer who holds no live offer.
func NoOffer(shop shops.Shop) string {
	return shop.Name + ": there's no open offer for you right now. We'll text you when a slot opens up."
}

// Declined answers a NO.
func Declined(shop shops.Shop) string {
	return shop.Name + ": no problem, we'll let you know about the next opening."
}

// OptedOut answers a STOP.
func OptedOut(shop shops.Shop) string {
	return shop.Name + ": you're unsubscribed and won't get more offers. Reply START to resubscribe."
}

// OptedIn answers a START.
func OptedIn(shop shops.Shop) string {
	return shop.Name + ": you're subscribed to last-minute openings again. Reply STOP to opt out."
}

// OptedOutYes answers a YES from a customer who said STOP: they cannot take a slot.
func OptedOutYes(shop shops.Shop) string {
	return shop.Name + ": you've unsubscribed, so we can't hold a slot for you. Reply START to get offers again."
}

// Help answers HELP.
func Help(shop shops.Shop) string {
	return shop.Name + ": we text you when a slot opens. Reply YES to book, NO to pass, STOP to opt out. Contact: " + shop.SMSNumber
}

// Unrecognized answers a reply that is none of the keywords.
func Unrecognized(shop shops.Shop) string {
	return shop.Name + ": sorry, we didn't understand. Reply YES to book the slot we offered, NO to pass, HELP for help."
}

// UnknownNumber answers a text to a number no shop uses.
const UnknownNumber = "Sorry, this number doesn't take replies."

// RetryLater answers a reply that could not be handled now (the database or Redis is
// unavailable): nothing was decided, the customer may send it again.
const RetryLater = "Sorry, we couldn't handle your reply just now. Please reply again in a minute."

// Duration writes a time to pay as customers read it: whole minutes, rounded down so
// the text never promises more than the hold ("30 min", "1 hour", "1 h 30 min",
// "2 hours"); at least "1 min".
func Duration(d time.Duration) string {
	m := max(int(d/time.Minute), 1)
	switch {
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m == 60:
		return "1 hour"
	case m%60 == 0:
		return fmt.Sprintf("%d hours", m/60)
	default:
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
}
