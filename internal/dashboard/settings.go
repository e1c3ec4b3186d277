package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// settingsForm is the settings form as typed, with a message per field that is wrong.
// Field names are the API's (problem.Error.Field), so the domain's errors land next to
// the input they are about.
type settingsForm struct {
	Name, Timezone, Currency, PaymentMode                       string
	WaveSize, WaveInterval, MinLead, Cooldown, MaxPerDay, Delay string
	SendRate                                                    string
	QuietStart, QuietEnd                                        string
	Errors                                                      map[string]string
	// Language is the code of the shop's language.
	Language string
	// NotifyPhone is the owner's alert number for the inbox; "" for none.
	NotifyPhone string
	// Formality ("" for the language's default, informal, formal), GSM7 (prefer,
	// exact) and HelpContact ("" for the shop's number) are how the texts are written.
	Formality, GSM7, HelpContact string
	// AutoDeclare: a cancelled appointment of the book declares its opening by itself.
	AutoDeclare bool
	// MoveUpDays and ChainMax are the move-ups' settings, as typed.
	MoveUpDays, ChainMax string
	// Slug names the join page (/join/<slug>); PrivacyURL is the privacy policy its
	// consent disclosure links to ("" for none).
	Slug, PrivacyURL string
	// CancelByText: a booked customer's "can't make it" cancels and reoffers the time.
	CancelByText bool
	// Ranking is the wave's order inside a priority tier; SkipAfterNoShows the no-shows
	// that keep a customer out of offers, as typed ("" for never).
	Ranking, SkipAfterNoShows string
	// JoinCountries are the calling codes besides the shop's own (OwnCountry) whose
	// numbers may join from the join page or by text, as typed ("+44, +33"); Countries
	// says the form shows the field (a server with the join service).
	JoinCountries, OwnCountry string
	Countries                 bool
	// JoinKeywords are the shop's own join words, as typed ("CUTS, FADE").
	JoinKeywords string
	// Protection is the no-show protection's settings, as typed.
	Protection protectionForm
}

// protectionForm is the no-show protection's part of the settings form, as typed: the
// amounts in the shop's currency units ("20.00"), as prices are entered.
type protectionForm struct {
	// DepositAmount is a fixed deposit, DepositPercent a share of the price; "" for none.
	DepositAmount, DepositPercent string
	KeepCard                      bool
	Policy, LateCancelHours       string
	// NoShowFee and LateCancelFee are the fees; "" (or 0) for none.
	NoShowFee, LateCancelFee string
	// Connect says cards can be kept: shops are paid on their own Stripe accounts
	// (STRIPE_CONNECT=on). Without it, the form says so instead of offering the box.
	Connect bool
	// Currency is the shop's currency code, in capitals, that the amounts are in.
	Currency string
}

// protectionFormOf is the form of a shop's stored protection.
func protectionFormOf(s shops.Shop) protectionForm {
	p := s.Protection
	f := protectionForm{KeepCard: p.KeepCard, Policy: p.Policy, LateCancelHours: strconv.Itoa(p.LateCancelHours),
		Connect: s.Stripe.Required, Currency: strings.ToUpper(s.Currency)}
	if p.DepositCents != nil {
		f.DepositAmount = money.Plain(*p.DepositCents, s.Currency)
	}
	if p.DepositPercent != nil {
		f.DepositPercent = strconv.Itoa(*p.DepositPercent)
	}
	if p.NoShowFeeCents > 0 {
		f.NoShowFee = money.Plain(p.NoShowFeeCents, s.Currency)
	}
	if p.LateCancelFeeCents > 0 {
		f.LateCancelFee = money.Plain(p.LateCancelFeeCents, s.Currency)
	}
	return f
}

// readProtection reads the protection's part of the form in currency into the change
// the API's PATCH /api/shop would make with the same values, recording what cannot be
// read in errs under the API's field names. Every field is given, so what did not change
// stays as it is and the policy's version moves on only when its text, hours or fees do.
func readProtection(c echo.Context, currency string, connect bool, errs map[string]string) (protectionForm, shops.ProtectionChange) {
	val := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := protectionForm{DepositAmount: val("deposit"), DepositPercent: val("deposit_percent"),
		KeepCard: c.FormValue("keep_card") == "on", Policy: strings.TrimSpace(strings.ReplaceAll(c.FormValue("cancellation_policy"), "\r\n", "\n")),
		LateCancelHours: val("late_cancel_hours"), NoShowFee: val("no_show_fee"), LateCancelFee: val("late_cancel_fee"),
		Connect: connect, Currency: strings.ToUpper(currency)}
	ch := shops.ProtectionChange{DepositCentsSet: true, DepositPercentSet: true, Policy: &f.Policy}
	amount := func(field, text, what string) *int64 {
		if text == "" {
			return nil
		}
		cents, err := money.Parse(text, currency)
		if err != nil {
			errs[field] = "Enter " + what + " as a number with at most " + strconv.Itoa(money.Decimals(currency)) +
				" decimals, for example " + money.Plain(2000, currency) + "."
			return nil
		}
		return &cents
	}
	ch.DepositCents = amount("deposit_cents", f.DepositAmount, "the deposit")
	if f.DepositPercent != "" {
		if n, err := strconv.Atoi(strings.TrimSuffix(f.DepositPercent, "%")); err != nil {
			errs["deposit_percent"] = "Enter the deposit's share of the price as a whole number from 1 to 100."
		} else {
			ch.DepositPercent = &n
		}
	}
	// Without Connect the box is not offered (a kept card lives on the shop's own
	// account): the setting stays as it is.
	if connect {
		ch.KeepCard = &f.KeepCard
	}
	if n, err := strconv.Atoi(cmpOr(f.LateCancelHours, "0")); err != nil {
		errs["late_cancel_hours"] = "Enter the hours before the start from when a cancellation is late, 0 to " +
			strconv.Itoa(shops.MaxLateCancelHours) + "."
	} else {
		ch.LateCancelHours = &n
	}
	zero := int64(0)
	ch.NoShowFeeCents = cmpPtr(amount("no_show_fee_cents", f.NoShowFee, "the no-show fee"), &zero)
	ch.LateCancelFeeCents = cmpPtr(amount("late_cancel_fee_cents", f.LateCancelFee, "the late-cancellation fee"), &zero)
	return f, ch
}

// cmpPtr is p, or fallback when p is nil.
func cmpPtr[T any](p, fallback *T) *T {
	if p == nil {
		return fallback
	}
	return p
}

// notifyView is the alert number waiting for the code texted to it, and the form that
// takes the code.
type notifyView struct {
	Phone, Until string
	Error        string
}

type settingsView struct {
	Notice string
	SMS    string
	Form   settingsForm
	// Stripe is the shop's own Stripe account (STRIPE_CONNECT=on); nil without Connect.
	Stripe *stripeView
	// Sender is the shop's sender and its A2P registration (sender.go).
	Sender *senderView
	// RotateError asks for the confirmation a key rotation needs.
	RotateError string
	// Join is the shop's join page and its QR code, for the counter card; nil on a
	// refused form (the slug may not be saved).
	Join *joinView
	// Notify is the alert number waiting for its code; nil for none.
	Notify *notifyView
}

// joinView is the shop's join page, as the counter card shows it, with what its limits
// refused in the last week.
type joinView struct {
	URL, QR string
	// Refused are the refusals of the last 7 days by reason, in the order they are
	// checked ("" when none); BudgetSpent when the hourly budget was last spent.
	Refused     []string
	BudgetSpent string
}

// refusalWords name the join page's refusal reasons for the owner.
var refusalWords = map[string]string{
	"honeypot": "filled by a bot", "country": "a country you do not allow", "shape": "not a mobile number",
	"own_number": "your shop's own number", "ip": "too many from one address", "number": "already sent a text today",
	"shop_budget": "your hourly budget was spent", "unavailable": "could not be checked",
}

func (d *Dashboard) joinViewOf(s shops.Shop) *joinView {
	if !d.cfg.JoinPages {
		return nil
	}
	path := "/join/" + s.Slug
	return &joinView{URL: strings.TrimRight(d.cfg.PublicURL, "/") + path, QR: path + "/qr.svg"}
}

// joinCountriesOf fills the form's countries that may join besides the shop's own
// (nothing without the join service).
func (d *Dashboard) joinCountriesOf(c echo.Context, shop shops.Shop, f *settingsForm) error {
	if d.cfg.Join == nil {
		return nil
	}
	codes, err := d.cfg.Join.AllowedCountries(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	// Written as the API writes them: "+44".
	for i := range codes {
		codes[i] = "+" + strings.TrimPrefix(codes[i], "+")
	}
	f.Countries, f.OwnCountry, f.JoinCountries = true, codes[0], strings.Join(codes[1:], ", ")
	return nil
}

// joinRefusals adds what the join page refused in the last week to v (nothing without
// the join service, or when it cannot be read: the card still shows the page).
func (d *Dashboard) joinRefusals(c echo.Context, shop shops.Shop, v *joinView) {
	if v == nil || d.cfg.Join == nil {
		return
	}
	r, err := d.cfg.Join.Refusals(c.Request().Context(), shop.ID, d.cfg.Now().AddDate(0, 0, -7))
	if err != nil {
		d.logger(c).Warn("read join refusals", "shop_id", shop.ID, "err", err)
		return
	}
	for _, reason := range join.RefusalReasons {
		if n := r.ByReason[reason]; n > 0 {
			v.Refused = append(v.Refused, fmt.Sprintf("%d %s", n, cmpOr(refusalWords[reason], reason)))
		}
	}
	if r.BudgetSpentAt != nil {
		v.BudgetSpent = r.BudgetSpentAt.In(shop.Location).Format("Mon 2 Jan 15:04")
	}
}

// newKeyView is the answer to a key rotation: the new key, shown on this page only.
type newKeyView struct {
	Key string
}

func settingsFormOf(s shops.Shop) settingsForm {
	p := s.Policy
	f := settingsForm{Name: s.Name, Timezone: s.Timezone, Currency: strings.ToUpper(s.Currency), PaymentMode: s.PaymentMode,
		WaveSize: strconv.Itoa(p.WaveSize), WaveInterval: strconv.Itoa(int(p.WaveInterval / time.Second)),
		MinLead: strconv.Itoa(int(p.MinLead / time.Minute)), Cooldown: strconv.Itoa(int(p.Cooldown / time.Second)),
		Delay: strconv.Itoa(int(p.FirstWaveDelay / time.Second)), SendRate: strconv.Itoa(p.SendRate),
		Language: string(s.Language), NotifyPhone: s.NotifyPhone,
		Formality: string(s.Formality), GSM7: cmpOr(string(s.GSM7), string(shops.GSM7Prefer)), HelpContact: s.HelpContact,
		AutoDeclare: s.AutoDeclare, Slug: s.Slug, PrivacyURL: s.PrivacyURL, JoinKeywords: strings.Join(s.JoinKeywords, ", "),
		MoveUpDays: strconv.Itoa(s.MoveUpDays), ChainMax: strconv.Itoa(s.ChainMax),
		CancelByText: s.CustomersCancelByText, Ranking: cmpOr(string(s.Ranking), string(shops.RankingPriority)),
		Protection: protectionFormOf(s)}
	if s.SkipAfterNoShows != nil {
		f.SkipAfterNoShows = strconv.Itoa(*s.SkipAfterNoShows)
	}
	if p.MaxOffersPerDay > 0 {
		f.MaxPerDay = strconv.Itoa(p.MaxOffersPerDay)
	}
	if q := p.Quiet; q != nil {
		f.QuietStart, f.QuietEnd = shops.FormatClock(q.Start), shops.FormatClock(q.End)
	}
	return f
}

func (d *Dashboard) settings(c echo.Context) error {
	s := current(c)
	v := settingsView{SMS: s.Shop.SMSNumber, Form: settingsFormOf(s.Shop), Stripe: stripeViewOf(s.Shop),
		Sender: d.senderViewOf(c.Request().Context(), s.Shop), Join: d.joinViewOf(s.Shop)}
	d.joinRefusals(c, s.Shop, v.Join)
	var err error
	if err = d.joinCountriesOf(c, s.Shop, &v.Form); err != nil {
		return d.internalError(c, "read join countries", err)
	}
	if v.Notify, err = d.notifyViewOf(c, s.Shop); err != nil {
		return d.internalError(c, "read pending alert number", err)
	}
	switch c.QueryParam("notice") {
	case "saved":
		v.Notice = "Settings saved. They apply to the next wave of offers."
	case "code_sent":
		v.Notice = "Settings saved. We texted a code to your new alert number: enter it below to start the alerts there."
	case "notify_confirmed":
		v.Notice = "Your alert number is confirmed: alerts go to it from now on."
	case "stripe":
		v.Notice = "Back from Stripe. Your Stripe account's status is below."
	case "stripe_expired":
		v.Notice = "Your link to Stripe expired or was used. Press the button below to go on with Stripe."
	case "stripe_lagging":
		v.Notice = "Back from Stripe. Stripe did not answer just now, so the status below may be a minute behind."
	}
	return d.render(c, http.StatusOK, "Settings · "+s.Shop.Name, v)
}

func (d *Dashboard) saveSettings(c echo.Context) error {
	s := current(c)
	val := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := settingsForm{Name: val("name"), Timezone: val("timezone"), Currency: val("currency"), PaymentMode: val("payment_mode"),
		WaveSize: val("wave_size"), WaveInterval: val("wave_interval_seconds"), MinLead: val("min_lead_minutes"),
		Cooldown: val("cooldown_seconds"), MaxPerDay: val("max_offers_per_day"), Delay: val("first_wave_delay_seconds"),
		SendRate: val("send_rate_per_second"), QuietStart: val("quiet_start"), QuietEnd: val("quiet_end"),
		Language: val(shops.LanguageField), NotifyPhone: val("notify_phone"), Errors: map[string]string{}}
	ch := shops.ShopChange{Name: &f.Name, Timezone: &f.Timezone, Currency: &f.Currency, PaymentMode: &f.PaymentMode}
	// A form from before a field existed keeps the setting; an empty alert number or help
	// contact removes it.
	if form, err := c.FormParams(); err == nil {
		if form.Has("notify_phone") && f.NotifyPhone != "" && f.NotifyPhone != s.Shop.NotifyPhone {
			if err := shops.CheckNotifyPhone(s.Shop, f.NotifyPhone); err != nil {
				f.Errors["notify_phone"] = friendlySetting(err)
			}
		}
		if form.Has("cancel_by_text_shown") {
			f.CancelByText = form.Get("customers_cancel_by_text") == "on"
			ch.CustomersCancelByText = &f.CancelByText
		}
		if form.Has("ranking") {
			f.Ranking = val("ranking")
			rk := shops.Ranking(f.Ranking)
			ch.Ranking = &rk
		}
		if form.Has("skip_after_no_shows") {
			f.SkipAfterNoShows = val("skip_after_no_shows")
			ch.SkipAfterNoShowsSet = true
			if f.SkipAfterNoShows != "" {
				if n, err := strconv.Atoi(f.SkipAfterNoShows); err != nil {
					f.Errors["skip_after_no_shows"] = "Enter a number of no-shows from 1 to 20, or leave it empty for never."
				} else {
					ch.SkipAfterNoShows = &n
				}
			}
		}
		if form.Has("formality") {
			f.Formality = val("formality")
			formality := shops.FormalityDefault
			if f.Formality != "" {
				if parsed, err := shops.ParseFormality(f.Formality); err != nil {
					f.Errors["formality"] = "Choose one of the ways in the list."
				} else {
					formality = parsed
				}
			}
			ch.Formality = &formality
		}
		if form.Has("gsm7") {
			f.GSM7 = val("gsm7")
			if g7, err := shops.ParseGSM7(f.GSM7); err != nil {
				f.Errors["gsm7"] = "Choose one of the ways in the list."
			} else {
				ch.GSM7 = &g7
			}
		}
		if form.Has("help_contact") {
			f.HelpContact = val("help_contact")
			ch.HelpContact = &f.HelpContact
		}
		if form.Has("slug") {
			f.Slug = val("slug")
			ch.Slug = &f.Slug
		}
		if form.Has("privacy_url") {
			f.PrivacyURL = val("privacy_url")
			ch.PrivacyURL = &f.PrivacyURL
		}
		if form.Has("join_keywords") {
			f.JoinKeywords = val("join_keywords")
			words := strings.FieldsFunc(f.JoinKeywords, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
			ch.JoinKeywords = &words
		}
		if form.Has("join_countries") && d.cfg.Join != nil {
			f.Countries, f.JoinCountries = true, val("join_countries")
			f.OwnCountry = "+" + strings.TrimPrefix(phone.CallingCode(s.Shop.SMSNumber), "+")
		}
		if form.Has("protection_shown") {
			currency := s.Shop.Currency
			if len(f.Currency) == 3 {
				currency = strings.ToLower(f.Currency)
			}
			f.Protection, ch.Protection = readProtection(c, currency, s.Shop.Stripe.Required, f.Errors)
		} else {
			f.Protection = protectionFormOf(s.Shop)
		}
		// The checkbox is sent only when ticked: its hidden companion says the form has it.
		if form.Has("auto_declare_shown") {
			f.AutoDeclare = form.Get("auto_declare") == "on"
			ch.AutoDeclare = &f.AutoDeclare
		}
	}
	number := func(field, text, msg string) *int {
		n, err := strconv.Atoi(text)
		if err != nil {
			f.Errors[field] = msg
			return nil
		}
		return &n
	}
	duration := func(field, text string, unit time.Duration, msg string) *time.Duration {
		n := number(field, text, msg)
		if n == nil {
			return nil
		}
		// Bounded so that the product cannot overflow; the domain refuses what is out
		// of range.
		d := time.Duration(max(min(*n, int((1<<62)/int64(unit))), -1)) * unit
		return &d
	}
	// A form from before the move-up fields keeps them.
	if form, err := c.FormParams(); err == nil && form.Has("move_up_days") {
		f.MoveUpDays, f.ChainMax = val("move_up_days"), val("chain_max")
		ch.MoveUpDays = number("move_up_days", f.MoveUpDays, "Enter how many days ahead a booking may be moved from, 0 to 90.")
		ch.ChainMax = number("chain_max", f.ChainMax, "Enter how many moves one freed time may set going, 0 to 20.")
	}
	if f.Language != "" { // a form from before the field existed keeps the shop's language
		if lang, err := shops.ParseLanguage(f.Language); err != nil {
			f.Errors[shops.LanguageField] = "Choose one of the languages in the list."
		} else {
			ch.Language = &lang
		}
	}
	ch.Policy.WaveSize = number("offer_policy.wave_size", f.WaveSize, "Enter how many customers each wave texts, 1 to 1000.")
	if f.SendRate != "" { // a form from before the field existed keeps the shop's rate
		ch.Policy.SendRate = number("offer_policy.send_rate_per_second", f.SendRate, "Enter how many texts a second your number may send, 1 to 1000.")
	}
	ch.Policy.WaveInterval = duration("offer_policy.wave_interval_seconds", f.WaveInterval, time.Second, "Enter the seconds between waves, 10 to 86400.")
	ch.Policy.MinLead = duration("offer_policy.min_lead_minutes", f.MinLead, time.Minute, "Enter the minutes before the start when offers stop, 0 to 10080.")
	ch.Policy.Cooldown = duration("offer_policy.cooldown_seconds", f.Cooldown, time.Second, "Enter the seconds a customer who booked is left alone, 0 to 2592000.")
	ch.Policy.FirstWaveDelay = duration("offer_policy.first_wave_delay_seconds", cmpOr(f.Delay, "0"), time.Second, "Enter the grace period in seconds, 0 to 86400.")
	if f.MaxPerDay == "" {
		none := 0
		ch.Policy.MaxOffersPerDay = &none
	} else if n := number("offer_policy.max_offers_per_day", f.MaxPerDay, "Enter a whole number from 1 to 1000, or leave it empty for no limit."); n != nil {
		if *n < 1 {
			f.Errors["offer_policy.max_offers_per_day"] = "Enter a whole number from 1 to 1000, or leave it empty for no limit."
		}
		ch.Policy.MaxOffersPerDay = n
	}
	ch.Policy.QuietSet = true
	switch {
	case f.QuietStart == "" && f.QuietEnd == "":
	default:
		start, ok1 := shops.ParseClock(f.QuietStart)
		end, ok2 := shops.ParseClock(f.QuietEnd)
		if !ok1 || !ok2 || start == 1440 || end == 1440 {
			f.Errors["offer_policy.quiet_hours"] = "Enter both times as HH:MM, or leave both empty for no quiet hours."
		} else {
			ch.Policy.Quiet = &shops.QuietHours{Start: start, End: end}
		}
	}
	// The join page's countries are checked first and set once the shop's change is
	// made, as the API does: a refusal of either changes neither.
	countries := strings.FieldsFunc(f.JoinCountries, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	if f.Countries {
		if _, err := join.CheckAllowedCountries(s.Shop, countries); err != nil {
			f.Errors[join.AllowedCountriesField] = friendlySetting(err)
		}
	}
	if len(f.Errors) == 0 {
		shop, err := d.shops.Update(c.Request().Context(), s.Shop.ID, ch)
		if err == nil && f.Countries {
			_, err = d.cfg.Join.SetAllowedCountries(c.Request().Context(), shop, countries)
		}
		notice := "saved"
		if form, ferr := c.FormParams(); err == nil && ferr == nil && form.Has("notify_phone") {
			if notice, err = d.changeNotifyPhone(c, shop, f.NotifyPhone); err != nil {
				notice = ""
			}
		}
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard settings saved", "shop_id", s.Shop.ID)
			return c.Redirect(http.StatusSeeOther, "/dashboard/settings?notice="+notice)
		case isProblem && p.Kind == problem.Limited && p.Field == "":
			f.Errors["notify_phone"] = friendlySetting(p)
		case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict) && p.Field != "":
			f.Errors[p.Field] = friendlySetting(p)
		default:
			return d.internalError(c, "save settings", err)
		}
	}
	return d.render(c, http.StatusUnprocessableEntity, "Check the settings · "+s.Shop.Name,
		settingsView{SMS: s.Shop.SMSNumber, Form: f, Stripe: stripeViewOf(s.Shop)})
}

// friendlySetting ends a domain message as a sentence.
func friendlySetting(err error) string {
	p, ok := problem.As(err)
	if !ok {
		return "Something went wrong; try again."
	}
	msg := p.Message
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// rotateKey gives the shop a new API key and shows it once, on this answer only: it is
// never put in a cookie, a URL or a log, and the page is not cached (no-store). The old
// key stops working at once, for the API and for signing in, and every dashboard
// session of the shop ends (their key version is now behind). This browser gets a new
// session under the new key, so the owner who rotated stays signed in. Reloading the
// answer re-posts the form with the ended session's CSRF token and is refused: a reload
// never rotates again.
func (d *Dashboard) rotateKey(c echo.Context) error {
	s := current(c)
	if c.FormValue("confirm") != "yes" {
		return d.render(c, http.StatusUnprocessableEntity, "Settings · "+s.Shop.Name, settingsView{
			SMS: s.Shop.SMSNumber, Form: settingsFormOf(s.Shop), Stripe: stripeViewOf(s.Shop),
			RotateError: "Tick the box to confirm that the current key should stop working.",
		})
	}
	// The new session is made before the rotation, so nothing can fail between the
	// rotation and showing its key: a key that was never shown would leave the owner
	// with no working key and no session.
	ns, err := d.newSession(s.Shop.ID, 0)
	if err != nil {
		return d.internalError(c, "new session", err)
	}
	shop, key, err := d.shops.RotateKey(c.Request().Context(), s.Shop.ID)
	if err != nil {
		return d.internalError(c, "rotate key", err)
	}
	ns.KeyVersion = shop.KeyVersion
	c.SetCookie(d.cookie(sessionCookie, d.encodeSession(ns), cookiePath, d.cfg.SessionTTL))
	c.Set(ctxSession, &signedIn{Shop: shop, Session: ns, CSRF: d.csrfToken(ns)})
	d.logger(c).Info("dashboard key rotated", "shop_id", shop.ID, "key_version", shop.KeyVersion)
	return d.render(c, http.StatusOK, "New API key · "+shop.Name, newKeyView{Key: key})
}
