package dashboard

import (
	"strconv"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The settings page, and the answer to a key rotation.

func (v settingsView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Settings")),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		h.P(h.Class("lede"), g.Text("Changes apply to the next wave of offers. Openings keep their time if you change the "+
			"time zone; only how they read changes. Texts come from "+v.SMS+".")),
		g.If(len(v.Form.Errors) > 0, h.Div(h.Class("error-summary"), h.Role("alert"), h.TabIndex("-1"),
			h.H3(g.Text("Check the settings")),
			h.P(g.Text("Some values need fixing; each is marked below.")),
		)),
		v.stripeCard(csrf),
		v.senderCard(),
		v.notifyCard(csrf),
		v.Form.form(csrf),
		v.joinCard(),
		v.rotateCard(csrf),
	}
}

// stripeCard is the shop's own Stripe account (STRIPE_CONNECT=on): its status in plain
// words, and the button to Stripe's onboarding. Nothing without Connect.
func (v settingsView) stripeCard(csrf string) g.Node {
	st := v.Stripe
	if st == nil {
		return nil
	}
	statusClass := "alert"
	if st.Ready {
		statusClass = "notice"
	}
	return h.Section(h.Class("card"), h.Aria("labelledby", "stripe-h"), h.ID("stripe"),
		h.H2(h.ID("stripe-h"), g.Text("Stripe payments")),
		h.P(h.Class(statusClass), h.ID("stripe-status"), h.Strong(g.Text(st.Status)),
			g.If(st.Detail != "", g.Text(". "+st.Detail))),
		g.If(st.Error != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(st.Error))),
		g.If(st.Fee != "", h.P(h.Class("muted"), g.Text(st.Fee))),
		g.If(st.Action != "", h.Form(h.Method("post"), h.Action(StripeOnboardingPath),
			csrfInput(csrf),
			h.Button(h.Type("submit"), h.Class("btn btn-primary"), h.ID("stripe-onboarding"), g.Text(st.Action)))),
	)
}

func (f settingsForm) form(csrf string) g.Node {
	return h.Form(h.Method("post"), h.Action("/dashboard/settings"), novalidate(), h.Class("card"),
		csrfInput(csrf),
		h.H2(g.Text("Your shop")),
		f.nameField(),
		h.Div(h.Class("row"), f.timezoneField(), f.currencyField(), f.paymentField()),
		f.languageField(),
		f.notifyPhoneField(),
		f.Protection.fields(f.Errors),
		h.H2(g.Text("Offers")),
		h.Div(h.Class("row"),
			f.numberField("offer_policy.wave_size", "set-wave-size", "wave_size", "Customers per wave", nil, f.WaveSize),
			f.sendRateField(),
			f.numberField("offer_policy.wave_interval_seconds", "set-interval", "wave_interval_seconds",
				"Seconds between waves", nil, f.WaveInterval),
			f.numberField("offer_policy.min_lead_minutes", "set-lead", "min_lead_minutes",
				"Stop offering (minutes before the start)", nil, f.MinLead),
		),
		h.Div(h.Class("row"),
			f.numberField("offer_policy.max_offers_per_day", "set-max-per-day", "max_offers_per_day",
				"Most offers per customer per day", h.P(h.Class("hint"), g.Text("Empty: no limit.")), f.MaxPerDay),
			f.numberField("offer_policy.first_wave_delay_seconds", "set-delay", "first_wave_delay_seconds",
				"Grace before the first wave (seconds)",
				h.P(h.Class("hint"), g.Text("Time to cancel an opening declared by mistake.")), f.Delay),
			f.numberField("offer_policy.cooldown_seconds", "set-cooldown", "cooldown_seconds",
				"Leave a customer who booked alone for (seconds)", nil, f.Cooldown),
		),
		f.quietHoursField(),
		h.Div(h.Class("row"),
			f.selectField("ranking", "set-ranking", "Who is texted first", "Inside each priority, customers on the waitlist first as always.",
				f.Ranking, [][2]string{
					{"priority", "Your list's order"},
					{"fair", "Fair: offered least recently first"},
					{"reliable", "Reliable: fewest no-shows first"},
					{"value", "Value: dearest service first"},
				}),
			f.numberField("skip_after_no_shows", "set-skip-no-shows", "skip_after_no_shows", "Stop offering after this many no-shows",
				h.P(h.Class("hint"), g.Text("In 180 days; empty: never. Clear a customer's no-shows on their page.")), f.SkipAfterNoShows),
		),
		h.H2(g.Text("Texts")),
		h.Div(h.Class("row"), f.formalityField(), f.gsm7Field()),
		f.helpContactField(),
		f.joinFields(),
		h.H2(g.Text("Appointment book")),
		f.autoDeclareField(),
		f.cancelByTextField(),
		f.numberField("move_up_days", "set-move-up-days", "move_up_days", "Move-ups: days ahead",
			h.P(h.Class("hint"), h.ID("set-move-up-days-hint"), g.Text("A freed time is offered first to customers who asked "+
				"for earlier times and are booked up to this many days later (0: no move-ups).")), f.MoveUpDays),
		f.numberField("chain_max", "set-chain-max", "chain_max", "Move-ups: moves a freed time may set going",
			h.P(h.Class("hint"), h.ID("set-chain-max-hint"), g.Text("Each move frees the mover's old time, offered in turn: "+
				"a chain. It stops after this many moves.")), f.ChainMax),
		h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Save settings")),
	)
}

func (f settingsForm) nameField() g.Node {
	e := f.Errors["name"]
	return inputField("set-name", "Name", e, h.Name("name"), h.Type("text"), h.MaxLength("200"), h.Value(f.Name))
}

func (f settingsForm) timezoneField() g.Node {
	e := f.Errors["timezone"]
	return inputField("set-timezone", "Time zone", e, h.Name("timezone"), h.Type("text"), h.Value(f.Timezone),
		h.Placeholder("America/New_York"))
}

func (f settingsForm) currencyField() g.Node {
	e := f.Errors["currency"]
	return inputField("set-currency", "Currency", e, h.Name("currency"), h.Type("text"), h.MaxLength("3"), h.Class("short"),
		h.Value(f.Currency))
}

func (f settingsForm) paymentField() g.Node {
	e := f.Errors["payment_mode"]
	choice := func(value, label string) g.Node {
		return h.Option(h.Value(value), g.If(f.PaymentMode == value, h.Selected()), g.Text(label))
	}
	return h.Div(fieldClass(e),
		h.Label(h.For("set-payment"), g.Text("Payment")),
		fieldError("set-payment-error", e),
		h.Select(h.ID("set-payment"), h.Name("payment_mode"), invalid(e, "set-payment-error"),
			choice("checkout", "Card payment link (Stripe)"),
			// No-show protection (issue 48): its deposit, policy and fees are below.
			choice("deposit", "Deposit by card link (Stripe), the rest at the shop"),
			choice("card", "Card kept for a no-show fee, nothing charged now (Stripe Connect)"),
			choice("none", "No payment: pay at the shop"),
		),
	)
}

// languageField is the shop's language: what offers and answers are texted in, unless
// a customer's own is set.
func (f settingsForm) languageField() g.Node {
	e := f.Errors[shops.LanguageField]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-language"), g.Text("Language of the texts")),
		h.P(h.Class("hint"), h.ID("set-language-hint"), g.Text("Offers and answers go out in it, "+
			"except to customers you have given their own language (on their page).")),
		fieldError("set-language-error", e),
		h.Select(h.ID("set-language"), h.Name(shops.LanguageField),
			h.Aria("describedby", describedBy("set-language-hint", e, "set-language-error")),
			g.If(e != "", h.Aria("invalid", "true")),
			g.Map(languageOptions(language.Code(f.Language), ""), func(o option) g.Node {
				return h.Option(h.Value(o.Value), g.If(o.Selected, h.Selected()), g.Text(o.Label))
			}),
		),
	)
}

// notifyCard takes the code texted to a new alert number; nothing when none waits.
func (v settingsView) notifyCard(csrf string) g.Node {
	n := v.Notify
	if n == nil {
		return nil
	}
	return h.Section(h.Class("card"), h.Aria("labelledby", "notify-h"), h.ID("notify"),
		h.H2(h.ID("notify-h"), g.Text("Confirm your alert number")),
		h.P(g.Text("We texted a six-digit code to "+n.Phone+". Enter it by "+n.Until+
			" to send your alerts there. Until then they go where they went before.")),
		h.Form(h.Method("post"), h.Action(NotifyPhoneConfirmPath), novalidate(),
			csrfInput(csrf),
			inputField("notify-code", "Code", n.Error, h.Name("code"), h.Type("text"), inputMode("numeric"),
				h.AutoComplete("one-time-code"), h.MaxLength("12"), h.Class("short")),
			h.Button(h.Type("submit"), h.Class("btn btn-primary"), h.ID("notify-confirm"), g.Text("Confirm"))),
	)
}

// cancelByTextField says what a booked customer's "can't make it" does.
func (f settingsForm) cancelByTextField() g.Node {
	e := f.Errors["customers_cancel_by_text"]
	return h.Div(fieldClass(e),
		h.Input(h.Type("hidden"), h.Name("cancel_by_text_shown"), h.Value("1")),
		h.P(h.Class("inline-check"),
			h.Input(h.ID("set-cancel-by-text"), h.Name("customers_cancel_by_text"), h.Type("checkbox"), h.Value("on"),
				g.If(f.CancelByText, h.Checked()), h.Aria("describedby", "set-cancel-by-text-hint")),
			h.Label(h.For("set-cancel-by-text"), g.Text("Customers may cancel by text"))),
		h.P(h.Class("hint"), h.ID("set-cancel-by-text-hint"), g.Text("A booked customer who texts that they cannot come "+
			"is cancelled and their time offered again at once. Unticked, their text waits in your inbox.")),
		fieldError("set-cancel-by-text-error", e),
	)
}

// notifyPhoneField is the owner's alert number: texted when a customer's text waits in
// the inbox.
func (f settingsForm) notifyPhoneField() g.Node {
	e := f.Errors["notify_phone"]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-notify-phone"), g.Text("Alert me at this number")),
		h.P(h.Class("hint"), h.ID("set-notify-phone-hint"), g.Text("When a customer's text waits in your inbox, "+
			"this number gets a text (at most once per conversation every 15 minutes). Form +15555550123; empty: no alerts. "+
			"A new number is texted a code to confirm it.")),
		fieldError("set-notify-phone-error", e),
		h.Input(h.ID("set-notify-phone"), h.Name("notify_phone"), h.Type("tel"), h.AutoComplete("tel"), h.Value(f.NotifyPhone),
			h.Aria("describedby", describedBy("set-notify-phone-hint", e, "set-notify-phone-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// selectField is a setting chosen from a list: field is its name in the API (and in
// Errors and the form), id its select's id, hint what the label does not say.
func (f settingsForm) selectField(field, id, label, hint, value string, options [][2]string) g.Node {
	e := f.Errors[field]
	return h.Div(fieldClass(e),
		h.Label(h.For(id), g.Text(label)),
		h.P(h.Class("hint"), h.ID(id+"-hint"), g.Text(hint)),
		fieldError(id+"-error", e),
		h.Select(h.ID(id), h.Name(field), h.Aria("describedby", describedBy(id+"-hint", e, id+"-error")),
			g.If(e != "", h.Aria("invalid", "true")),
			g.Map(options, func(o [2]string) g.Node {
				return h.Option(h.Value(o[0]), g.If(value == o[0], h.Selected()), g.Text(o[1]))
			}),
		),
	)
}

// formalityField is how the texts address customers in Spanish and French.
func (f settingsForm) formalityField() g.Node {
	return f.selectField("formality", "set-formality", "Addressing customers",
		"In Spanish and French: tú/tu or usted/vous. English has one way.", f.Formality, [][2]string{
			{"", "The language's usual way (tú in Spanish, vous in French)"},
			{"informal", "Informal (tú, tu)"},
			{"formal", "Formal (usted, vous)"},
		})
}

// gsm7Field is whether accents may be dropped where that makes a text cheaper.
func (f settingsForm) gsm7Field() g.Node {
	return f.selectField("gsm7", "set-gsm7", "Accents",
		"An accent outside the basic SMS alphabet (á, í, ó, ú, ç, ê) turns a text into two or three paid parts.",
		f.GSM7, [][2]string{
			{"prefer", "Drop them where that saves a part (á → a)"},
			{"exact", "Keep every accent"},
		})
}

// helpContactField is the contact the answer to HELP gives.
func (f settingsForm) helpContactField() g.Node {
	e := f.Errors["help_contact"]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-help-contact"), g.Text("Contact in the answer to HELP")),
		h.P(h.Class("hint"), h.ID("set-help-contact-hint"), g.Text("A phone number, an e-mail or an address, one line. "+
			"Empty: your texting number.")),
		fieldError("set-help-contact-error", e),
		h.Input(h.ID("set-help-contact"), h.Name("help_contact"), h.Type("text"), h.MaxLength("100"), h.Value(f.HelpContact),
			h.Aria("describedby", describedBy("set-help-contact-hint", e, "set-help-contact-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// joinFields are the join page's address and the privacy policy its consent disclosure
// links to.
func (f settingsForm) joinFields() g.Node {
	slugErr, privErr := f.Errors["slug"], f.Errors["privacy_url"]
	return g.Group{
		h.Div(fieldClass(slugErr),
			h.Label(h.For("set-slug"), g.Text("Join page address")),
			h.P(h.Class("hint"), h.ID("set-slug-hint"), g.Text("Customers join your list at /join/"+f.Slug+
				". 3 to 40 letters a-z, digits and dashes.")),
			fieldError("set-slug-error", slugErr),
			h.Input(h.ID("set-slug"), h.Name("slug"), h.Type("text"), h.MaxLength("40"), h.Value(f.Slug),
				h.AutoComplete("off"), h.Aria("describedby", describedBy("set-slug-hint", slugErr, "set-slug-error")),
				g.If(slugErr != "", h.Aria("invalid", "true"))),
		),
		h.Div(fieldClass(privErr),
			h.Label(h.For("set-privacy-url"), g.Text("Privacy policy (optional)")),
			h.P(h.Class("hint"), h.ID("set-privacy-url-hint"), g.Text("An https address; the join page links to it "+
				"beside the consent box.")),
			fieldError("set-privacy-url-error", privErr),
			h.Input(h.ID("set-privacy-url"), h.Name("privacy_url"), h.Type("url"), h.MaxLength("300"), h.Value(f.PrivacyURL),
				h.Aria("describedby", describedBy("set-privacy-url-hint", privErr, "set-privacy-url-error")),
				g.If(privErr != "", h.Aria("invalid", "true"))),
		),
		f.joinKeywordsField(),
		f.joinCountriesField(),
	}
}

// joinKeywordsField is the shop's own words that ask to join by text.
func (f settingsForm) joinKeywordsField() g.Node {
	e := f.Errors["join_keywords"]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-join-keywords"), g.Text("Your own join words (optional)")),
		h.P(h.Class("hint"), h.ID("set-join-keywords-hint"), g.Text("Customers who text JOIN, UNIRME or INSCRIRE to your "+
			"number are asked to confirm; add up to 5 words of your own, e.g. CUTS, FADE (2 to 20 letters or digits, "+
			"none a word customers already use to answer, such as YES or STOP).")),
		fieldError("set-join-keywords-error", e),
		h.Input(h.ID("set-join-keywords"), h.Name("join_keywords"), h.Type("text"), h.MaxLength("120"), h.Value(f.JoinKeywords),
			h.AutoComplete("off"), h.Aria("describedby", describedBy("set-join-keywords-hint", e, "set-join-keywords-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// joinCountriesField is the calling codes besides the shop's own whose numbers may join.
func (f settingsForm) joinCountriesField() g.Node {
	if !f.Countries {
		return nil
	}
	e := f.Errors["join_countries"]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-join-countries"), g.Text("Other countries that may join (optional)")),
		h.P(h.Class("hint"), h.ID("set-join-countries-hint"), g.Text("Numbers of your own country ("+f.OwnCountry+
			") always may. Add others by their calling code, separated by commas, e.g. +44, +33 (at most 10): "+
			"each confirmation text to them costs you more, and only countries you serve should be open.")),
		fieldError("set-join-countries-error", e),
		h.Input(h.ID("set-join-countries"), h.Name("join_countries"), h.Type("text"), h.MaxLength("80"), h.Value(f.JoinCountries),
			h.AutoComplete("off"), h.Aria("describedby", describedBy("set-join-countries-hint", e, "set-join-countries-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// autoDeclareField is whether a cancelled appointment of the book declares its opening
// by itself.
func (f settingsForm) autoDeclareField() g.Node {
	e := f.Errors["auto_declare"]
	return h.Div(fieldClass(e),
		h.Input(h.Type("hidden"), h.Name("auto_declare_shown"), h.Value("1")),
		h.P(h.Class("inline-check"),
			h.Input(h.ID("set-auto-declare"), h.Name("auto_declare"), h.Type("checkbox"), h.Value("on"), g.If(f.AutoDeclare, h.Checked()),
				h.Aria("describedby", "set-auto-declare-hint")),
			h.Label(h.For("set-auto-declare"), g.Text("Offer a cancelled appointment's time by itself"))),
		h.P(h.Class("hint"), h.ID("set-auto-declare-hint"), g.Text("When your booking system cancels a future appointment, "+
			"its time is offered at once. Unticked, it waits on the Book page for you to press \u201cOffer it\u201d.")),
		fieldError("set-auto-declare-error", e),
	)
}

// numberField is one of the offer policy's numbers: field is its name in the API (and
// in Errors), id its input's id, name its form name, hint (or nil) what the label does
// not say.
func (f settingsForm) numberField(field, id, name, label string, hint g.Node, value string) g.Node {
	e := f.Errors[field]
	return h.Div(fieldClass(e),
		h.Label(h.For(id), g.Text(label)),
		hint,
		fieldError(id+"-error", e),
		h.Input(h.ID(id), h.Name(name), h.Type("number"), inputMode("numeric"), h.Class("short"), h.Value(value),
			invalid(e, id+"-error")),
	)
}

// sendRateField is a number field whose input also points at its hint.
func (f settingsForm) sendRateField() g.Node {
	e := f.Errors["offer_policy.send_rate_per_second"]
	return h.Div(fieldClass(e),
		h.Label(h.For("set-send-rate"), g.Text("Texts a second your number may send")),
		h.P(h.Class("hint"), h.ID("set-send-rate-hint"), g.Text("About 1 for an ordinary (long code) number, "+
			"3 for toll-free, 100 for a short code. Waves are paced to it.")),
		fieldError("set-send-rate-error", e),
		h.Input(h.ID("set-send-rate"), h.Name("send_rate_per_second"), h.Type("number"), inputMode("numeric"),
			h.Class("short"), h.Value(f.SendRate),
			h.Aria("describedby", describedBy("set-send-rate-hint", e, "set-send-rate-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

func (f settingsForm) quietHoursField() g.Node {
	e := f.Errors["offer_policy.quiet_hours"]
	clock := func(id, name, label, value string) g.Node {
		return h.Div(h.Class("time"),
			h.Label(h.For(id), g.Text(label)),
			h.Input(h.ID(id), h.Name(name), h.Type("time"), h.Value(value), invalid(e, "set-quiet-error")),
		)
	}
	return h.FieldSet(fieldClass(e),
		h.Legend(g.Text("Quiet hours "), h.Span(h.Class("muted"), g.Text("(no texts; empty: none)"))),
		fieldError("set-quiet-error", e),
		h.Div(h.Class("row"),
			clock("set-quiet-start", "quiet_start", "From", f.QuietStart),
			clock("set-quiet-end", "quiet_end", "Until", f.QuietEnd),
		),
	)
}

// rotateCard is the API key's rotation: a warning, and a box to tick to confirm.
// joinCard is the counter card: the join page's address and its QR code, to print and
// put by the mirror.
func (v settingsView) joinCard() g.Node {
	j := v.Join
	if j == nil {
		return nil
	}
	return h.Section(h.Class("card"), h.Aria("labelledby", "join-h"), h.ID("join-card"),
		h.H2(h.ID("join-h"), g.Text("Customers join your list")),
		h.P(g.Text("Customers join by themselves on your join page: they give their name and number, tick the consent "+
			"box, and reply YES to the text they get. Print the code for your counter, or link to the page.")),
		h.P(h.A(h.ID("join-url"), h.Href(j.URL), g.Text(j.URL))),
		h.Img(h.ID("join-qr"), h.Src(j.QR), h.Alt("QR code of your join page"), h.Width("240"), h.Height("240")),
		g.If(len(j.Refused) > 0, h.P(h.ID("join-refused"), g.Text("Not texted in the last 7 days, to keep fraudsters from "+
			"spending your texts: "+strings.Join(j.Refused, ", ")+"."))),
		g.If(j.BudgetSpent != "", h.P(h.Class("alert"), h.ID("join-budget"), g.Text("The page's hourly budget of texts was last spent "+
			j.BudgetSpent+": for the rest of that hour nobody new could join from it."))),
	)
}

func (v settingsView) rotateCard(csrf string) g.Node {
	e := v.RotateError
	return h.Section(h.Class("card"), h.Aria("labelledby", "key-h"), h.ID("rotate-key"),
		h.H2(h.ID("key-h"), g.Text("API key")),
		h.P(g.Text("The shop's API key signs you in here and lets your booking system call the API. "+
			"Rotate it if it may have leaked, or when someone who knew it leaves.")),
		h.P(h.Class("alert"), h.ID("rotate-warning"),
			h.Strong(g.Text("The current key stops working at once,")),
			g.Text(" for the API and for signing in, and everyone signed in to this dashboard on another device or "+
				"browser is signed out. The new key is shown once, on the next page: have a safe place ready to keep it, "+
				"and update whatever uses the old one.")),
		h.Form(h.Method("post"), h.Action("/dashboard/settings/rotate-key"), novalidate(),
			csrfInput(csrf),
			h.Div(fieldClass(e),
				fieldError("rotate-confirm-error", e),
				h.P(h.Class("inline-check"),
					h.Input(h.ID("rotate-confirm"), h.Name("confirm"), h.Type("checkbox"), h.Value("yes"),
						invalid(e, "rotate-confirm-error")),
					h.Label(h.For("rotate-confirm"), g.Text("I understand that the current key stops working")),
				),
			),
			h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text("Rotate API key")),
		),
	)
}

func (v newKeyView) content(string) g.Node {
	return g.Group{
		h.H1(g.Text("Your new API key")),
		h.P(h.Class("notice"), h.Role("status"), h.ID("rotated-notice"),
			g.Text("The key was rotated. Your old key stopped working just now.")),
		h.Section(h.Class("card"), h.Aria("labelledby", "newkey-h"),
			h.H2(h.ID("newkey-h"), g.Text("Copy it now: it is shown only once")),
			h.P(g.Text("Only a fingerprint of the key is kept, so this page cannot be shown again. "+
				"If you lose the key, rotate it again from the settings.")),
			h.P(h.Class("secret"), h.Code(h.ID("new-key"), g.Text(v.Key))),
			h.Ul(h.ID("rotated-effects"),
				h.Li(g.Text("The old key no longer works: update your booking system, or anything else that calls the API with it.")),
				h.Li(g.Text("Everyone who was signed in to this dashboard, on any device, has been signed out. "+
					"You stay signed in here.")),
				h.Li(g.Text("Sign in with the new key from now on.")),
			),
			h.P(h.A(h.Class("btn"), h.Href("/dashboard/settings"), g.Text("Back to the settings"))),
		),
	}
}

// fields are the no-show protection's settings: the deposit, the kept card, and the
// cancellation policy with its hours and fees. Field names in errs are the API's.
func (f protectionForm) fields(errs map[string]string) g.Node {
	amount := func(field, id, name, label, hint, value string) g.Node {
		e := errs[field]
		return h.Div(fieldClass(e),
			h.Label(h.For(id), g.Text(label+" "), h.Span(h.Class("muted"), g.Text("in "+f.Currency))),
			h.P(h.Class("hint"), h.ID(id+"-hint"), g.Text(hint)),
			fieldError(id+"-error", e),
			h.Input(h.ID(id), h.Name(name), h.Type("text"), inputMode("decimal"), h.Class("short"), h.Value(value),
				h.Aria("describedby", describedBy(id+"-hint", e, id+"-error")), g.If(e != "", h.Aria("invalid", "true"))),
		)
	}
	percentErr, hoursErr, policyErr, keepErr := errs["deposit_percent"], errs["late_cancel_hours"], errs["cancellation_policy"], errs["keep_card"]
	return g.Group{
		h.H2(h.ID("protection-h"), g.Text("No-show protection")),
		h.Input(h.Type("hidden"), h.Name("protection_shown"), h.Value("1")),
		h.P(h.Class("hint"), g.Text("With \u201cDeposit\u201d as the payment, a customer who takes a time pays the deposit; "+
			"the rest is paid at the shop. Give an amount or a share of the price, not both.")),
		h.Div(h.Class("row"),
			amount("deposit_cents", "set-deposit", "deposit", "Deposit", "A fixed amount; empty: none.", f.DepositAmount),
			h.Div(fieldClass(percentErr),
				h.Label(h.For("set-deposit-percent"), g.Text("Or deposit, % of the price")),
				h.P(h.Class("hint"), h.ID("set-deposit-percent-hint"), g.Text("1 to 100; empty: none.")),
				fieldError("set-deposit-percent-error", percentErr),
				h.Input(h.ID("set-deposit-percent"), h.Name("deposit_percent"), h.Type("number"), inputMode("numeric"),
					h.Min("1"), h.Max("100"), h.Class("short"), h.Value(f.DepositPercent),
					h.Aria("describedby", describedBy("set-deposit-percent-hint", percentErr, "set-deposit-percent-error")),
					g.If(percentErr != "", h.Aria("invalid", "true"))),
			),
		),
		f.keepCardField(keepErr),
		h.Div(fieldClass(policyErr),
			h.Label(h.For("set-policy"), g.Text("Cancellation policy")),
			h.P(h.Class("hint"), h.ID("set-policy-hint"), g.Text("In the language of your texts, at most "+
				strconv.Itoa(shops.MaxPolicyLen)+" characters. Customers accept it on the payment page; a change applies to "+
				"bookings made after it.")),
			fieldError("set-policy-error", policyErr),
			h.Textarea(h.ID("set-policy"), h.Name("cancellation_policy"), h.Rows("4"), h.MaxLength(strconv.Itoa(shops.MaxPolicyLen)),
				h.Aria("describedby", describedBy("set-policy-hint", policyErr, "set-policy-error")),
				g.If(policyErr != "", h.Aria("invalid", "true")), g.Text(f.Policy)),
		),
		h.Div(h.Class("row"),
			h.Div(fieldClass(hoursErr),
				h.Label(h.For("set-late-cancel-hours"), g.Text("Late cancellation: hours before the start")),
				h.P(h.Class("hint"), h.ID("set-late-cancel-hours-hint"), g.Text("Cancelling later than this is late: "+
					"the deposit is kept and the late-cancellation fee charged. 0 to "+strconv.Itoa(shops.MaxLateCancelHours)+".")),
				fieldError("set-late-cancel-hours-error", hoursErr),
				h.Input(h.ID("set-late-cancel-hours"), h.Name("late_cancel_hours"), h.Type("number"), inputMode("numeric"),
					h.Class("short"), h.Value(f.LateCancelHours),
					h.Aria("describedby", describedBy("set-late-cancel-hours-hint", hoursErr, "set-late-cancel-hours-error")),
					g.If(hoursErr != "", h.Aria("invalid", "true"))),
			),
			amount("no_show_fee_cents", "set-no-show-fee", "no_show_fee", "No-show fee",
				"Charged to a kept card; empty: none.", f.NoShowFee),
			amount("late_cancel_fee_cents", "set-late-cancel-fee", "late_cancel_fee", "Late-cancellation fee",
				"Charged to a kept card; empty: none.", f.LateCancelFee),
		),
	}
}

// keepCardField is whether a paying customer's card is kept for a fee; without Connect,
// the plain reason it cannot be.
func (f protectionForm) keepCardField(e string) g.Node {
	if !f.Connect {
		return h.Div(fieldClass(e),
			fieldError("set-keep-card-error", e),
			h.P(h.Class("hint"), h.ID("set-keep-card-unavailable"), g.Text("Keeping cards for a fee is not available on "+
				"this server: a kept card lives on your own Stripe account, and this server does not connect shops' own "+
				"Stripe accounts (STRIPE_CONNECT). Fees can be charged only to a kept card.")),
		)
	}
	return h.Div(fieldClass(e),
		h.P(h.Class("inline-check"),
			h.Input(h.ID("set-keep-card"), h.Name("keep_card"), h.Type("checkbox"), h.Value("on"), g.If(f.KeepCard, h.Checked()),
				h.Aria("describedby", describedBy("set-keep-card-hint", e, "set-keep-card-error")), g.If(e != "", h.Aria("invalid", "true"))),
			h.Label(h.For("set-keep-card"), g.Text("Keep the card a customer pays with, for a fee"))),
		h.P(h.Class("hint"), h.ID("set-keep-card-hint"), g.Text("With card payment or a deposit. \u201cCard kept\u201d as "+
			"the payment always keeps it. The card stays on your own Stripe account.")),
		fieldError("set-keep-card-error", e),
	)
}
