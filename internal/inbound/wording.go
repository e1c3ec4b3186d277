package inbound

import (
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Reply texts, kept together so their tone stays the same. The booking texts (link,
// confirmation) are slots', since its jobs send them too.
func bookedLinkFollowsText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: %s %s is yours! Your payment link is on its way in a separate text.",
		shop.Name, service, shop.When(startsAt))
}

func takenText(shop shops.Shop) string {
	return shop.Name + ": sorry, that slot was just taken. We'll text you when another opens up."
}

func noOfferText(shop shops.Shop) string {
	return shop.Name + ": there's no open offer for you right now. We'll text you when a slot opens up."
}

func declinedText(shop shops.Shop) string {
	return shop.Name + ": no problem, we'll let you know about the next opening."
}

func optedOutText(shop shops.Shop) string {
	return shop.Name + ": you're unsubscribed and won't get more offers. Reply START to resubscribe."
}

func optedInText(shop shops.Shop) string {
	return shop.Name + ": you're subscribed to last-minute openings again. Reply STOP to opt out."
}

func helpText(shop shops.Shop) string {
	return shop.Name + ": we text you when a slot opens. Reply YES to book, NO to pass, STOP to opt out. Contact: " + shop.SMSNumber
}

func unrecognizedText(shop shops.Shop) string {
	return shop.Name + ": sorry, we didn't understand. Reply YES to book the slot we offered, NO to pass, HELP for help."
}

const unknownNumberText = "Sorry, this number doesn't take replies."

const retryLaterText = "Sorry, we couldn't handle your reply just now. Please reply again in a minute."

func optedOutYesText(shop shops.Shop) string {
	return shop.Name + ": you've unsubscribed, so we can't hold a slot for you. Reply START to get offers again."
}
