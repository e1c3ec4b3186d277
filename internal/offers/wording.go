package offers

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// OfferText is the offer SMS: shop, service, local day and time, price, how to book and
// how to stop. It fits one GSM-7 segment for typical names.
func OfferText(shop shops.Shop, service string, startsAt time.Time, priceCents int64) string {
	return fmt.Sprintf("%s: %s opening %s, %s. Reply YES to book. STOP to opt out",
		shop.Name, service, shop.When(startsAt), Money(priceCents, shop.Currency))
}

// Money formats an amount in the smallest currency unit for a text: "$45.00", "€45.00",
// "45.00 SEK". Zero-decimal currencies (JPY, KRW) have no fraction.
func Money(cents int64, currency string) string {
	cur := strings.ToUpper(currency)
	var amount string
	switch cur {
	case "JPY", "KRW", "VND", "CLP", "ISK", "UGX", "XAF", "XOF":
		amount = fmt.Sprintf("%d", cents)
	default:
		amount = fmt.Sprintf("%d.%02d", cents/100, cents%100)
	}
	switch cur {
	case "USD", "CAD", "AUD", "NZD":
		return "$" + amount
	case "GBP":
		return "£" + amount
	case "EUR":
		return "€" + amount
	default:
		return amount + " " + cur
	}
}
