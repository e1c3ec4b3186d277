package join

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

//go:embed catalogue/*.json
var catalogues embed.FS

// words are the catalogues, by language and message id; TestCataloguesAreComplete holds
// every language to English's ids.
var words = func() map[language.Code]map[string]string {
	out := map[language.Code]map[string]string{}
	for _, l := range language.All {
		b, err := catalogues.ReadFile("catalogue/" + string(l) + ".json")
		if err != nil {
			panic(fmt.Sprintf("join: catalogue %s: %v", l, err)) // embedded: a build defect
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic(fmt.Sprintf("join: catalogue %s: %v", l, err))
		}
		out[l] = m
	}
	return out
}()

// Words returns message id in lang (English when lang has none), with each {key} of
// args replaced by its value: args are key, value pairs.
func Words(lang language.Code, id string, args ...string) string {
	s, ok := words[lang][id]
	if !ok {
		s = words[language.English][id]
	}
	if len(args) == 0 {
		return s
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+args[i]+"}", args[i+1])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// smsText renders message id for shop in lang as texted: with the shop's GSM-7 setting
// applied as internal/texts applies it to its own texts (its unexported fit; the rule
// should be exported there and called here): under shops.GSM7Prefer, letters outside
// GSM-7 are folded when that makes the text fewer segments.
func smsText(shop shops.Shop, lang language.Code, id string, args ...string) string {
	body := Words(lang, id, args...)
	if shop.GSM7 == shops.GSM7Exact || sms.IsGSM7(body) {
		return body
	}
	if folded := texts.FoldGSM7(body); sms.Segments(folded) < sms.Segments(body) {
		return folded
	}
	return body
}
