package page

import (
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"
)

// The page is built as Go values with gomponents, as the dashboard's are, not executed
// from a template: a template's executor looks methods up by name at run time, which
// keeps every exported method of every type in the binary (an html/template page made
// the server's binary 43 % larger and each instance's peak RSS about 7 MiB higher).

// node is the whole page of v.
func (v view) node() g.Node {
	return h.Doctype(h.HTML(h.Lang(v.Lang),
		h.Head(
			h.Meta(h.Charset("utf-8")),
			h.Meta(h.Name("viewport"), h.Content("width=device-width, initial-scale=1")),
			h.Meta(h.Name("referrer"), h.Content("same-origin")),
			h.TitleEl(g.Text(v.Title)),
			h.Link(h.Rel("stylesheet"), h.Href(v.Base+"/join.css")),
		),
		h.Body(h.Main(v.content())),
	))
}

func (v view) content() g.Node {
	switch {
	case v.Done:
		return g.Group{
			h.H1(g.Text(v.T["check_phone_title"])),
			h.P(h.Class("done"), h.Role("status"), h.ID("join-done"), g.Text(v.T["check_phone"])),
			// Shown to every visitor, so it tells nothing of the number: one that said STOP
			// is never texted the confirmation, and joins by texting START instead.
			h.P(h.Class("hint"), h.ID("join-stopped"), g.Text(v.T["check_phone_stopped"])),
		}
	case v.NotFound:
		return h.H1(g.Text(v.T["not_found"]))
	}
	en, ep, ec := v.Errors["name"], v.Errors["phone"], v.Errors["consent"]
	return g.Group{
		h.H1(g.Text(v.Title)),
		h.P(h.Class("lede"), g.Text(v.T["lede"])),
		g.If(v.FormError != "", h.P(h.Class("alert"), h.Role("alert"), h.ID("join-form-error"), g.Text(v.FormError))),
		h.Form(h.Method("post"), h.Action(v.Base), g.Attr("novalidate"),
			h.Input(h.Type("hidden"), h.Name("csrf"), h.Value(v.CSRF)),
			h.Div(fieldClass(en),
				h.Label(h.For("join-name"), g.Text(v.T["name"])),
				g.If(en != "", h.P(h.Class("error"), h.ID("join-name-error"), g.Text(en))),
				h.Input(h.Type("text"), h.ID("join-name"), h.Name("name"), h.MaxLength("100"), h.AutoComplete("name"), h.Value(v.Name),
					g.If(en != "", g.Group{h.Aria("invalid", "true"), h.Aria("describedby", "join-name-error")})),
			),
			h.Div(fieldClass(ep),
				h.Label(h.For("join-phone"), g.Text(v.T["phone"])),
				h.P(h.Class("hint"), h.ID("join-phone-hint"), g.Text(v.T["phone_hint"])),
				g.If(ep != "", h.P(h.Class("error"), h.ID("join-phone-error"), g.Text(ep))),
				h.Input(h.Type("tel"), h.ID("join-phone"), h.Name("phone"), h.MaxLength("40"), h.AutoComplete("tel"),
					g.Attr("inputmode", "tel"), h.Value(v.Phone), h.Aria("describedby", describedBy("join-phone-hint", ep, "join-phone-error")),
					g.If(ep != "", h.Aria("invalid", "true"))),
			),
			h.Div(h.Class("field"),
				h.Label(h.For("join-language"), g.Text(v.T["language"])),
				h.Select(h.ID("join-language"), h.Name("language"),
					g.Map(v.Languages, func(o languageOption) g.Node {
						return h.Option(h.Value(o.Code), g.If(o.Selected, h.Selected()), g.Text(o.Name))
					})),
			),
			v.wants(),
			h.Div(h.Class("hp"), h.Aria("hidden", "true"),
				h.Label(h.For("join-website"), g.Text("Website")),
				h.Input(h.Type("text"), h.ID("join-website"), h.Name("website"), h.TabIndex("-1"), h.AutoComplete("off"), h.Value("")),
			),
			h.Div(fieldClass(ec),
				g.If(ec != "", h.P(h.Class("error"), h.ID("join-consent-error"), g.Text(ec))),
				h.P(h.Class("consent"),
					h.Input(h.Type("checkbox"), h.ID("join-consent"), h.Name("consent"), h.Value("yes"), g.If(v.Consent, h.Checked()),
						h.Aria("describedby", describedBy("join-disclosure", ec, "join-consent-error")), g.If(ec != "", h.Aria("invalid", "true"))),
					h.Label(h.For("join-consent"), g.Text(v.T["consent"])),
				),
				h.P(h.Class("disclosure"), h.ID("join-disclosure"), g.Text(v.Disclosure),
					g.If(strings.HasPrefix(v.PrivacyURL, "https://"), g.Group{g.Text(" "), h.A(h.Href(v.PrivacyURL), h.Rel("noopener noreferrer"), g.Text(v.T["privacy"]))})),
			),
			h.Button(h.Type("submit"), h.ID("join-submit"), g.Text(v.T["submit"])),
		),
	}
}

// fieldClass is a field's class: "field", and "invalid" when it has an error.
func fieldClass(err string) g.Node {
	if err != "" {
		return h.Class("field invalid")
	}
	return h.Class("field")
}

// describedBy lists a control's hint and, when there is one, its error.
func describedBy(hint, err, errID string) string {
	ids := []string{hint}
	if err != "" {
		ids = append(ids, errID)
	}
	return strings.Join(ids, " ")
}

// wants is the optional fieldset of what the visitor would like: the shop's services
// and people (when it has any), days, and a time range. Every error sits right above
// its group.
func (v view) wants() g.Node {
	group := func(field string, items []choice) g.Node {
		if len(items) == 0 {
			return nil
		}
		err := v.Errors[field]
		return h.Div(fieldClass(err),
			h.P(h.Class("label"), h.ID("join-"+field+"-label"), g.Text(v.T[field])),
			g.If(err != "", h.P(h.Class("error"), h.ID("join-"+field+"-error"), g.Text(err))),
			h.Div(h.Class("choices"), h.ID("join-"+field), h.Role("group"),
				h.Aria("labelledby", describedBy("join-"+field+"-label", err, "join-"+field+"-error")),
				g.If(err != "", h.Aria("invalid", "true")),
				g.Map(items, func(c choice) g.Node {
					return h.Label(h.Input(h.Type("checkbox"), h.Name(field), h.Value(c.Value), g.If(c.Checked, h.Checked())), g.Text(c.Label))
				})),
		)
	}
	clockSelect := func(id, name, selected string) g.Node {
		return h.Select(h.ID(id), h.Name(name),
			h.Option(h.Value(""), g.If(selected == "", h.Selected()), g.Text(v.T["any_time"])),
			g.Map(v.Clock, func(c string) g.Node {
				return h.Option(h.Value(c), g.If(c == selected, h.Selected()), g.Text(c))
			}))
	}
	et := v.Errors["times"]
	return h.FieldSet(h.Class("wants"), h.Aria("describedby", "join-wants-hint"),
		h.Legend(g.Text(v.T["wants"])),
		h.P(h.Class("hint"), h.ID("join-wants-hint"), g.Text(v.T["wants_hint"])),
		group("services", v.Services),
		group("staff", v.Staff),
		group("days", v.Days),
		h.Div(fieldClass(et),
			h.P(h.Class("label"), h.ID("join-times-label"), g.Text(v.T["times"])),
			g.If(et != "", h.P(h.Class("error"), h.ID("join-times-error"), g.Text(et))),
			h.Div(h.Class("times"), h.ID("join-times"), h.Role("group"),
				h.Aria("labelledby", describedBy("join-times-label", et, "join-times-error")),
				g.If(et != "", h.Aria("invalid", "true")),
				h.Label(h.For("join-from"), g.Text(v.T["time_from"])), clockSelect("join-from", "from", v.From),
				h.Label(h.For("join-to"), g.Text(v.T["time_to"])), clockSelect("join-to", "to", v.To),
			),
		),
	)
}
