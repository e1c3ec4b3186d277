package stripe

import "strings"

// minimumCharge is the smallest amount Stripe accepts for a charge in each settlement
// currency it lists, in the currency's smallest unit (Stripe's "Minimum and maximum
// charge amounts"). A Checkout Session for less fails, so the customer who said YES
// would hear "yours!" and then that their hold lapsed.
var minimumCharge = map[string]int64{
	"usd": 50, "aed": 200, "aud": 50, "bgn": 100, "brl": 50, "cad": 50, "chf": 50,
	"czk": 1500, "dkk": 250, "eur": 50, "gbp": 30, "hkd": 400, "huf": 17500, "inr": 50,
	"jpy": 50, "mxn": 1000, "myr": 200, "nok": 300, "nzd": 50, "pln": 200, "ron": 200,
	"sek": 300, "sgd": 50, "thb": 1000,
}

// MinimumCharge returns the smallest amount Stripe charges in currency (its smallest
// unit), or 0 when Stripe publishes no minimum for it.
func MinimumCharge(currency string) int64 {
	return minimumCharge[strings.ToLower(currency)]
}
