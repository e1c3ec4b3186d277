package dashboard

import (
	"github.com/slotrecovery/slotrecovery/internal/language"
)

// languageNames are the supported languages as owners read them on the dashboard.
var languageNames = map[language.Code]string{
	language.English: "English",
	language.Spanish: "Spanish (español)",
	language.French:  "French (français)",
}

// languageName is c in words; a code with no name yet shows as itself.
func languageName(c language.Code) string {
	if n, ok := languageNames[c]; ok {
		return n
	}
	return string(c)
}

// shopsLanguage says "the shop's" language in words, naming it: what a customer without
// their own is texted in.
func shopsLanguage(shop language.Code) string {
	return "The shop's: " + languageName(shop)
}

// languageOptions are the choices of a language select, value code, in language.All's
// order, with selected chosen; first, when not empty, is an option of value "" put
// before them.
func languageOptions(selected language.Code, first string) []option {
	var out []option
	if first != "" {
		out = append(out, option{Value: "", Label: first, Selected: selected == ""})
	}
	for _, c := range language.All {
		out = append(out, option{Value: string(c), Label: languageName(c), Selected: selected == c})
	}
	return out
}
