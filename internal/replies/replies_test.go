package replies_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/replies"
)

type readCase struct {
	name, body, optOut string
	want               replies.Intent
}

func runReadCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := replies.Read(c.body, c.optOut)
			require.Equal(t, c.want, got.Intent, "Read(%q, %q) = %+v", c.body, c.optOut, got)
		})
	}
}

// TestReadKeepsInboundParse holds every case internal/inbound's Parse is tested on, as
// replies reads them.
func TestReadKeepsInboundParse(t *testing.T) {
	t.Parallel()
	runReadCases(t, []readCase{
		{"upper yes", "YES", "", replies.Yes},
		{"lower yes", "yes", "", replies.Yes},
		{"yes with bang", "Yes!", "", replies.Yes},
		{"y with spaces", " y ", "", replies.Yes},
		{"yes please", "yes please", "", replies.Yes},
		{"yeah with bangs", "Yeah!!", "", replies.Yes},
		{"yes counted as START is still yes", "YES", "START", replies.Yes},
		{"no", "no", "", replies.No},
		{"no thanks", "No thanks.", "", replies.No},
		{"STOP", "STOP", "", replies.OptOut},
		{"stop with period", "stop.", "", replies.OptOut},
		{"unsubscribe", "Unsubscribe", "", replies.OptOut},
		{"cancel alone", "cancel", "", replies.OptOut},
		{"stopall", "STOPALL", "", replies.OptOut},
		{"end", "end", "", replies.OptOut},
		{"quit", "quit", "", replies.OptOut},
		{"opt out in two words", "opt out", "", replies.OptOut},
		{"revoke", "REVOKE", "", replies.OptOut},
		{"optout in one word", "OPTOUT", "", replies.OptOut},
		{"cancel inside a sentence is not an opt-out", "cancel my 3pm please", "", replies.CancelRequest},
		{"Twilio's STOP wins over the words", "anything", "STOP", replies.OptOut},
		{"start", "start", "", replies.OptIn},
		{"unstop", "UNSTOP", "", replies.OptIn},
		{"start counted as START", "start", "START", replies.OptIn},
		{"help", "help", "", replies.Help},
		{"help with Twilio's HELP", "HELP?", "HELP", replies.Help},
		{"info", "INFO", "", replies.Help},
		{"empty", "", "", replies.Unknown},
		{"a question", "what time is it", "", replies.Unknown},
		{"an emoji alone", "🙂", "", replies.Unknown},
		{"N is a no", "N", "", replies.No},
		{"OptOutType in lower case with spaces", "yes", " stop ", replies.OptOut},
		{"Twilio's HELP wins over a yes", "yes", "HELP", replies.Help},
		{"a no counted as START is an opt-in", "no", "START", replies.OptIn},
	})
}

// TestReadIssueWords holds the words the product promises to read (docs/api.md#replies),
// one case each.
func TestReadIssueWords(t *testing.T) {
	t.Parallel()
	var cases []readCase
	add := func(want replies.Intent, bodies ...string) {
		for _, b := range bodies {
			cases = append(cases, readCase{name: string(want) + "/" + b, body: b, want: want})
		}
	}
	add(replies.Yes,
		"YES", "Y", "YEP", "YEAH", "YEA", "YA", "YUP", "yess", "yesss", "yeees", "OK", "OKAY", "K", "KK",
		"SURE", "sounds good", "book it", "book me", "I'll take it", "I want it", "count me in",
		"put me down", "absolutely", "definitely", "yes please", "👍", "👍🏻", "👍🏼", "👍🏽", "👍🏾", "👍🏿",
		"✅", "👌", "SÍ", "SI", "CLARO", "VALE", "DALE", "lo quiero", "sí por favor", "OUI", "d'accord",
		"ok merci", "je le prends",
		// Punctuation, case, accents and trailing emoji do not matter.
		"Yes!!!", "yes.", "¡Sí!", "si!", "sí 😊", "D’ACCORD", "dacord", "oui 🙏", "okay 👍🏽", "I’LL TAKE IT")
	add(replies.No,
		"NO", "NOPE", "NAH", "PASS", "no thanks", "not this time", "can't make it", "not today", "👎",
		"no gracias", "no puedo", "NON", "non merci", "pas dispo", "Nope, busy")
	add(replies.OptOut,
		"stop texting me", "please stop", "stop!!", "remove me", "take me off your list",
		"unsubscribe me", "don't text me anymore", "no more texts", "no más", "no mas mensajes", "baja",
		"parar", "alto", "arrêt", "arrêtez", "désabonner", "stop svp", "stop texting me, yes",
		"Stop. Who is this?", "BAJA!!", "yes please. actually no, stop")
	add(replies.OptIn, "START", "UNSTOP")
	add(replies.Help, "HELP", "INFO", "AYUDA", "AIDE", "help please")
	add(replies.Clarify,
		"Liked “A 3pm slot just opened today. Reply YES to book it.”",
		"Loved “A 3pm slot just opened today”",
		"Emphasized “A 3pm slot just opened today”",
		`Liked "A 3pm slot just opened today"`,
		"👍 to “A 3pm slot just opened today”",
		"Reacted 👍 to “A 3pm slot just opened today”",
		"Reacted 👍🏾 to \"A 3pm slot just opened today\"",
		"yes but can it be 4pm?", "yes but at 5?", "maybe", "yes at 5", "yes?",
		// The quoted offer text is not the customer's words: no opt-out, no yes.
		"Liked “Reply YES to book, STOP to opt out”")
	add(replies.No, "Disliked “A 3pm slot just opened today”", "Reacted 👎 to “A 3pm slot just opened today”")
	// Issue 45: a booked customer who cannot come asks to cancel; CANCEL alone opts out.
	add(replies.CancelRequest, "cancel my 3pm appointment", "I need to cancel my appointment",
		"tengo que cancelar mi cita", "je dois annuler")
	add(replies.Unknown, "Removed a like from “A 3pm slot”",
		"end of day works", "Quitting smoking", "what time is it")
	// "Stop by" is a visit, not a stop: a question about another time, asked again.
	add(replies.Clarify, "Stop by at 4?")
	// "I can't stop by today" declines, so it is a no; what matters is that it is no opt-out.
	add(replies.No, "I can't stop by today")
	runReadCases(t, cases)
}

func TestReadLanguages(t *testing.T) {
	t.Parallel()
	en, es, fr := replies.English, replies.Spanish, replies.French
	for _, c := range []struct {
		body string
		want replies.Languages
	}{
		{"Sí", es},
		{"si", es},
		{"no gracias", es},
		{"No, gracias.", es},
		{"oui", fr},
		{"ok merci", fr},
		{"d'accord", fr},
		{"yes", en},
		{"no thanks", en},
		{"no", en | es},
		{"ok", en | es | fr},
		{"👍", en | es | fr},
		{"STOP", en | es | fr},
		{"stop svp", fr},
		{"baja", es},
		{"Sí!!!! 😍😍", es}, // emoji belong to every language
		{"yes gracias", 0},
		{"what time is it", 0},
		{"", 0},
		// A reaction's language is its verb's; the quoted offer is ours.
		{"Le gustó “A 3pm slot just opened today”", es},
		{"A aimé « A 3pm slot just opened today »", fr},
		{"Liked “Se liberó un turno hoy”", en},
	} {
		t.Run(c.body, func(t *testing.T) {
			t.Parallel()
			got := replies.Read(c.body, "")
			require.Equal(t, c.want, got.Languages, "Read(%q) = %+v", c.body, got)
		})
	}
}

func TestLanguages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		l    replies.Languages
		only string
		ok   bool
		str  string
	}{
		{"none", 0, "", false, "none"},
		{"english", replies.English, "en", true, "en"},
		{"spanish", replies.Spanish, "es", true, "es"},
		{"french", replies.French, "fr", true, "fr"},
		{"two", replies.English | replies.Spanish, "", false, "en+es"},
		{"all", replies.AllLanguages, "", false, "en+es+fr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			only, ok := c.l.Only()
			require.Equal(t, c.only, only)
			require.Equal(t, c.ok, ok)
			require.Equal(t, c.str, c.l.String())
		})
	}
	require.True(t, replies.AllLanguages.Has(replies.Spanish|replies.French))
	require.False(t, replies.English.Has(replies.English|replies.French))
	require.Equal(t, []string{"es", "fr"}, (replies.Spanish | replies.French).Tags())
}

// TestReadNeverYesWithMore: no reply labelled yes in the corpus stays a yes with a
// condition, a question or a time after it, and every one that reads as yes is an
// opt-out before or after a request to stop, even without a comma.
func TestReadNeverYesWithMore(t *testing.T) {
	t.Parallel()
	for _, c := range loadCorpus(t) {
		if c.want != replies.Yes {
			continue
		}
		for _, more := range []string{"?", " but at 5?", " but at 5", ", at 4:30", " for 2 people", " no", " maybe"} {
			got := replies.Read(c.reply+more, "").Intent
			require.NotEqual(t, replies.Yes, got, "%q read as yes", c.reply+more)
		}
		if replies.Read(c.reply, "").Intent != replies.Yes {
			continue // a yes the rules miss ("yse") is no short answer beside a stop
		}
		for _, stop := range []string{"stop texting me. ", "No more texts! ", "BAJA. ", "stop ", "arrêt ", "Arrêtez de m'envoyer des messages, "} {
			require.Equal(t, replies.OptOut, replies.Read(stop+c.reply, "").Intent, "%q", stop+c.reply)
			require.Equal(t, replies.OptOut, replies.Read(c.reply+" "+stop, "").Intent, "%q", c.reply+" "+stop)
		}
	}
}

// TestReadLoose: a yes made only of loose affirmatives ("ok", 👍, "sure", "va") is
// Loose, and takes an offer only as the answer to it; a yes with an explicit word is not.
func TestReadLoose(t *testing.T) {
	t.Parallel()
	for body, loose := range map[string]bool{
		"ok": true, "OK!": true, "okay thanks": true, "👍": true, "sure": true, "va": true, "vale": true,
		"d'accord merci": true, "done": true, "sounds good": true, "k": true,
		"yes": false, "Yes please": false, "ok yes": false, "sí": false, "oui": false, "book it": false,
		"I'll take it": false, "ok, book it": false, "dale, sí": false,
	} {
		got := replies.Read(body, "")
		require.Equal(t, replies.Yes, got.Intent, "%q", body)
		require.Equal(t, loose, got.Loose, "Read(%q) = %+v", body, got)
	}
	// Loose speaks only of a yes.
	require.False(t, replies.Read("ok, not today", "").Loose)
}

// TestReadWeakLanguage: one word that several languages write ("si", "va") is no
// evidence of the customer's language; a phrase of one language is.
func TestReadWeakLanguage(t *testing.T) {
	t.Parallel()
	for body, weak := range map[string]bool{
		"si": true, "Sí": true, "va": true, "ok": true, "no": true,
		"sí, gracias": false, "oui": false, "vale": false, "dale": false, "no gracias": false, "merci": false,
	} {
		got := replies.Read(body, "")
		require.Equal(t, weak, got.Weak, "Read(%q) = %+v", body, got)
	}
}

// TestReadWrongNumber: a wrong number is an opt-out that says the number may have been
// reassigned, in the three languages; another opt-out says nothing of the kind.
func TestReadWrongNumber(t *testing.T) {
	t.Parallel()
	for body, wrong := range map[string]bool{
		"wrong number": true, "Stop, wrong number": true, "you have the wrong person": true,
		"número equivocado": true, "se equivocó de número": true, "mauvais numéro": true,
		"Vous vous êtes trompé de numéro": true, "STOP": false, "this is spam": false, "baja": false,
	} {
		got := replies.Read(body, "")
		require.Equal(t, replies.OptOut, got.Intent, "%q", body)
		require.Equal(t, wrong, got.WrongNumber, "Read(%q) = %+v", body, got)
	}
}

// TestReadCannotCome: "can't make it" declines an offer (a No) and says the customer
// cannot come, which for a booked customer is a request to cancel (issue 45); an
// explicit request to cancel is CancelRequest, and the bare CANCEL stays an opt-out.
func TestReadCannotCome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body       string
		intent     replies.Intent
		cannotCome bool
	}{
		{"can't make it", replies.No, true},
		{"I can't come", replies.No, true},
		{"Sorry, I won't be able to make it", replies.No, true},
		{"no puedo ir", replies.No, true},
		{"No voy a poder ir mañana", replies.No, true},
		{"je ne pourrai pas venir", replies.No, true},
		{"Je ne peux pas venir", replies.No, true},
		{"I need to cancel my appointment", replies.CancelRequest, false},
		{"cancel my booking", replies.CancelRequest, false},
		{"tengo que cancelar mi cita", replies.CancelRequest, false},
		{"je dois annuler", replies.CancelRequest, false},
		{"I can't make it, I need to cancel", replies.CancelRequest, true},
		{"CANCEL", replies.OptOut, false},
		{"cancel", replies.OptOut, false},
		{"no thanks", replies.No, false},
		{"busy", replies.No, false},
		{"can't make it, stop texting me", replies.OptOut, true},
	} {
		got := replies.Read(c.body, "")
		require.Equal(t, c.intent, got.Intent, "Read(%q) = %+v", c.body, got)
		require.Equal(t, c.cannotCome, got.CannotCome, "Read(%q) = %+v", c.body, got)
	}
}
