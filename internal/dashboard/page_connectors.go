package dashboard

import (
	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// The Integrations page's "Booking systems" card, and the answer that shows a new
// connector's webhook URL and secret once.

// connectorsCard lists the shop's connectors and the form that adds one.
func (v integrationsView) connectorsCard(csrf string) g.Node {
	return h.Section(h.Class("card"), h.Aria("labelledby", "connectors-h"), h.ID("connectors"),
		h.H2(h.ID("connectors-h"), g.Text("Booking systems")),
		h.P(g.Text("Connect the system your appointments live in (cal.com, Square Appointments, or a Google, Outlook or "+
			"Apple calendar's secret address): its bookings fill the Book page, and a cancelled appointment still "+
			"ahead is offered as an opening.")),
		g.If(len(v.Connectors) == 0, h.P(h.Class("empty"), g.Text("No booking systems connected yet."))),
		g.Map(v.Connectors, func(x connectorView) g.Node { return x.card(csrf) }),
		// Above the form, and without it: a limit the form met is shown when the form no
		// longer is.
		g.If(v.ConnectorForm.Other != "", h.P(h.Class("alert"), h.Role("alert"), h.ID("connector-form-error"),
			g.Text(v.ConnectorForm.Other))),
		g.If(len(v.Connectors) < v.MaxConnectors, v.ConnectorForm.form(csrf)),
		g.If(len(v.Connectors) >= v.MaxConnectors, h.P(h.Class("muted"),
			g.Textf("A shop may have %d connections: remove one to add another.", v.MaxConnectors))),
	)
}

// card is one connector: its kind and name, where its vendor posts, its last delivery,
// and its actions.
func (x connectorView) card(csrf string) g.Node {
	id := x.ID.String()
	base := IntegrationsPath + "/connectors/" + id
	name := kindLabel(x.Kind)
	if x.Description != "" {
		name += ": " + x.Description
	}
	last := h.P(h.ID("connector-last-"+id), h.Class("muted"), g.Text("Last delivery: none yet."))
	if x.Last != "" {
		cls := "badge badge-ok"
		if x.LastBad {
			cls = "badge badge-bad"
		}
		last = h.P(h.ID("connector-last-"+id), g.Text("Last delivery: "), h.Span(h.Class(cls), g.Text(x.Last)))
	}
	return h.Article(h.Class("card endpoint"), h.ID("connector-"+id), h.Aria("labelledby", "connector-h-"+id),
		h.H3(h.ID("connector-h-"+id), g.Text(name)),
		g.If(x.WebhookURL != "", h.P(g.Text("Webhook URL: "), h.Code(h.ID("connector-url-"+id), g.Text(x.WebhookURL)))),
		g.If(x.Kind == connectors.SourceICS, h.P(h.Class("muted"), g.Text("The calendar's address is read every few minutes."))),
		h.P(h.Class("muted"), g.Text("Added "+x.Created)),
		last,
		g.If(x.NeedsKey, h.P(h.Class("alert"), g.Text("No signature key yet: every delivery from Square is refused "+
			"until you paste the key Square shows for the subscription."))),
		g.If(x.Error != "", h.P(h.Class("alert"), h.Role("alert"), h.ID("connector-error-"+id), g.Text(x.Error))),
		h.Div(h.Class("row endpoint-actions"),
			g.If(x.Kind == connectors.SourceSquare, h.Form(h.Method("post"), h.Action(base+"/key"), novalidate(), csrfInput(csrf),
				h.Div(h.Class("field"),
					h.Label(h.For("key-"+id), g.Text("Square's signature key"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
					h.Input(h.ID("key-"+id), h.Name("signature_key"), h.Type("password"), h.AutoComplete("off"),
						g.Attr("spellcheck", "false"), h.MaxLength("200")),
				),
				h.Button(h.Type("submit"), h.Class("btn"), g.Text("Save key"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
			)),
			g.If(x.Kind == connectors.SourceCalcom || x.Kind == connectors.SourceSquare, x.apiKeyForm(base, name, csrf)),
			h.Form(h.Method("post"), h.Action(base+"/delete"), novalidate(), csrfInput(csrf),
				h.P(h.Class("inline-check"),
					h.Input(h.ID("remove-"+id), h.Name("confirm"), h.Type("checkbox"), h.Value("yes")),
					h.Label(h.For("remove-"+id), g.Text("I understand its deliveries are refused from now on")),
				),
				h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text("Remove"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
			),
		),
	)
}

// form adds a connector: its kind, a name, and what the kind needs (Square's signature
// key, which may come later; a feed's address).
func (f connectorForm) form(csrf string) g.Node {
	eKind, eDesc, eKey, eURL := f.Errors["kind"], f.Errors["description"], f.Errors["signature_key"], f.Errors["url"]
	kind := f.Kind
	if kind == "" {
		kind = string(connectors.SourceCalcom)
	}
	return h.Form(h.Method("post"), h.Action(IntegrationsPath+"/connectors"), novalidate(), h.ID("add-connector"),
		csrfInput(csrf),
		h.H3(g.Text("Connect a booking system")),
		h.Div(fieldClass(eKind),
			h.Label(h.For("cn-kind"), g.Text("System")),
			fieldError("cn-kind-error", eKind),
			h.Select(h.ID("cn-kind"), h.Name("kind"), invalid(eKind, "cn-kind-error"),
				g.Map(connectorKinds, func(k connectors.Source) g.Node {
					return h.Option(h.Value(string(k)), g.If(string(k) == kind, h.Selected()), g.Text(kindLabel(k)))
				})),
		),
		inputField("cn-description", "Name (optional)", eDesc, h.Name("description"), h.Type("text"), h.MaxLength("200"),
			h.Value(f.Description), h.Placeholder("Main chair")),
		h.Div(fieldClass(eKey),
			h.Label(h.For("cn-key"), g.Text("Square's signature key (Square only; you may add it later)")),
			h.P(h.Class("hint"), h.ID("cn-key-hint"), g.Text("Square shows it once the subscription names the webhook URL "+
				"this page gives you: you can leave it empty now and save it on the connection afterwards.")),
			fieldError("cn-key-error", eKey),
			h.Input(h.ID("cn-key"), h.Name("signature_key"), h.Type("password"), h.AutoComplete("off"),
				g.Attr("spellcheck", "false"), h.MaxLength("200"), g.If(eKey != "", h.Aria("invalid", "true")),
				h.Aria("describedby", describedBy("cn-key-hint", eKey, "cn-key-error"))),
		),
		h.Div(fieldClass(eURL),
			h.Label(h.For("cn-url"), g.Text("Calendar's secret address (calendar feed only)")),
			h.P(h.Class("hint"), h.ID("cn-url-hint"), g.Text("Google Calendar: Settings, your calendar, "+
				"\"Secret address in iCal format\". Outlook: Publish a calendar, the ICS link.")),
			fieldError("cn-url-error", eURL),
			h.Input(h.ID("cn-url"), h.Name("url"), h.Type("text"), inputMode("url"), g.Attr("spellcheck", "false"),
				h.MaxLength("2000"), h.Value(f.URL), h.Placeholder("https://calendar.google.com/calendar/ical/…/basic.ics"),
				g.If(eURL != "", h.Aria("invalid", "true")), h.Aria("describedby", describedBy("cn-url-hint", eURL, "cn-url-error"))),
		),
		h.P(h.Class("hint"), g.Text("cal.com needs neither: the server makes its secret and shows it once.")),
		h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Connect")),
	)
}

func (v newConnectorView) content(string) g.Node {
	label := kindLabel(v.Kind)
	var steps g.Node
	switch v.Kind {
	case connectors.SourceCalcom:
		steps = h.P(g.Text("In cal.com, open Settings, Developer, Webhooks, and add a webhook with this URL as the " +
			"Subscriber URL and this secret as its Secret, for the events Booking created, Booking rescheduled and " +
			"Booking cancelled."))
	case connectors.SourceSquare:
		steps = h.P(g.Text("In Square's Developer Console, add a webhook subscription with this URL as its "+
			"notification URL, for booking.created and booking.updated."),
			g.If(!v.HasKey, g.Text(" Then paste the signature key Square shows for it into this connection on the "+
				"Integrations page: until then every delivery is refused.")))
	default:
		steps = h.P(g.Text("The calendar's address is read every few minutes from now on; its appointments show on the Book page."))
	}
	return g.Group{
		h.H1(g.Text("Your new " + label + " connection")),
		h.P(h.Class("notice"), h.Role("status"), h.ID("connector-notice"), g.Text("The connection was added.")),
		h.Section(h.Class("card"), h.Aria("labelledby", "connector-new-h"),
			h.H2(h.ID("connector-new-h"), g.Text(newConnectorHeading(v))),
			steps,
			g.If(v.WebhookURL != "", g.Group{
				h.H3(g.Text("Webhook URL")),
				h.P(h.Class("secret"), h.Code(h.ID("new-connector-url"), g.Text(v.WebhookURL))),
				h.P(h.Button(h.Type("button"), h.Class("btn"), h.Data("copy", "new-connector-url"), g.Attr("hidden"), g.Text("Copy URL"))),
			}),
			g.If(v.Secret != "", g.Group{
				h.H3(g.Text("Secret")),
				h.P(h.Class("secret"), h.Code(h.ID("new-secret"), g.Text(v.Secret))),
				h.P(h.Button(h.Type("button"), h.Class("btn"), h.Data("copy", "new-secret"), g.Attr("hidden"), g.Text("Copy secret"))),
				h.P(h.Class("muted"), g.Text("If you lose it, remove this connection and add a new one.")),
			}),
			h.P(h.A(h.Class("btn"), h.Href(IntegrationsPath+"#connectors"), g.Text("Back to the integrations"))),
		),
	}
}

// newConnectorHeading says what to copy now.
func newConnectorHeading(v newConnectorView) string {
	switch {
	case v.Secret != "":
		return "Copy the URL and the secret now: the secret is shown only once"
	case v.WebhookURL != "":
		return "Copy the webhook URL into " + kindLabel(v.Kind)
	}
	return "The calendar is connected"
}

// apiKeyForm gives the connector the vendor's API key, or takes it away: with it,
// customers' move-ups are written into the booking system by themselves.
func (x connectorView) apiKeyForm(base, name, csrf string) g.Node {
	id := x.ID.String()
	vendor := "cal.com"
	if x.Kind == connectors.SourceSquare {
		vendor = "Square"
	}
	if x.HasAPIKey {
		return h.Form(h.Method("post"), h.Action(base+"/api_key"), novalidate(), csrfInput(csrf),
			h.P(h.ID("api-key-held-"+id), g.Text("Move-ups are written into "+vendor+" with your API key.")),
			h.Input(h.Type("hidden"), h.Name("remove"), h.Value("yes")),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("Remove API key"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
		)
	}
	hint := "Create one in cal.com's Settings → Developer → API keys (it starts with cal_live_)."
	if x.Kind == connectors.SourceSquare {
		hint = "Your Square application's access token (Developer Dashboard → Credentials)."
	}
	return h.Form(h.Method("post"), h.Action(base+"/api_key"), novalidate(), csrfInput(csrf),
		h.Div(h.Class("field"),
			h.Label(h.For("api-key-"+id), g.Text(vendor+"'s API key (optional)"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
			h.P(h.Class("hint"), h.ID("api-key-hint-"+id), g.Text("With it, a customer's move to an earlier time is written into "+
				vendor+" by itself; without it, the Book page lists moves for you to copy. "+hint)),
			h.Input(h.ID("api-key-"+id), h.Name("api_key"), h.Type("password"), h.AutoComplete("off"),
				g.Attr("spellcheck", "false"), h.MaxLength("500"), h.Aria("describedby", "api-key-hint-"+id)),
		),
		h.Button(h.Type("submit"), h.Class("btn"), g.Text("Save API key"), h.Span(h.Class("vh"), g.Text(" ("+name+")"))),
	)
}
