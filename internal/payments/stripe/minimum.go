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

// chargeCurrencies are the currencies Stripe charges cards in (its "presentment
// currencies", docs.stripe.com/currencies), lower-case ISO 4217 codes as its API takes
// them. Those without an entry in minimumCharge are charged through a conversion to the
// account's settlement currency, whose minimum then applies after conversion.
var chargeCurrencies = set(`
	usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob brl
	bsd bwp byn bzd cad cdf chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd
	fkp gbp gel gip gmd gnf gtq gyd hkd hnl htg huf idr ils inr isk jmd jod jpy kes kgs
	khr kmf krw kwd kyd kzt lak lbp lkr lrd lsl mad mdl mga mkd mmk mnt mop mur mvr mwk
	mxn myr mzn nad ngn nio nok npr nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub
	rwf sar sbd scr sek sgd shp sle sos srd std szl thb tjs tnd top try ttd twd tzs uah
	ugx uyu uzs vnd vuv wst xaf xcd xcg xof xpf yer zar zmw`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// ChargesIn reports whether Stripe charges in currency (any case).
func ChargesIn(currency string) bool {
	return chargeCurrencies[strings.ToLower(currency)]
}
