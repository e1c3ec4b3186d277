package dashboard

import (
	"slices"
	"strconv"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// The Integrations page, and the answer that shows a new signing secret once.

func (v integrationsView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Integrations")),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		g.If(v.Error != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(v.Error))),
		h.P(h.Class("lede"), g.Text("Bring your recovered slots into your own calendar and systems: subscribe a calendar "+
			"to your feed, or have each change sent to your booking system, Zapier, Make or n8n as it happens.")),
		v.Calendar.card(csrf),
		g.If(v.Book, v.connectorsCard(csrf)),
		g.If(v.Hooks, v.endpointsCard(csrf)),
	}
}

// card is the calendar feed: its address with a copy button and a webcal link, whether
// it names customers in full, and a new address.
func (c calendarView) card(csrf string) g.Node {
	e := c.RotateError
	return h.Section(h.Class("card"), h.Aria("labelledby", "calendar-h"), h.ID("calendar"),
		h.H2(h.ID("calendar-h"), g.Text("Calendar feed")),
		h.P(g.Text("Subscribe to this address in Google Calendar (Other calendars, From URL), Apple Calendar "+
			"(File, New Calendar Subscription) or Outlook (Add calendar, Subscribe from web). Each held or paid "+
			"booking shows as an event, and disappears if the booking lapses or is refunded.")),
		g.If(c.OldUntil != "", h.P(h.Class("notice"), h.ID("calendar-old"), h.Role("status"),
			g.Text("The server's key changed, and with it this address. The previous one keeps working until "+c.OldUntil+
				": a calendar still subscribed to it must subscribe to the address below before then."))),
		h.P(h.Class("secret"), h.Code(h.ID("calendar-url"), g.Text(c.URL))),
		h.P(h.Class("row"),
			// Shown by the page's script where the browser can copy; the address above
			// selects whole on a click without it.
			h.Button(h.Type("button"), h.Class("btn"), h.Data("copy", "calendar-url"), g.Attr("hidden"), g.Text("Copy address")),
			h.A(h.Class("btn"), h.Href(c.Webcal), h.ID("calendar-webcal"), g.Text("Open in your calendar app")),
		),
		h.P(h.Class("muted"), g.Text("Anyone with the address can read the feed: share it only with your calendar.")),
		h.Form(h.Method("post"), h.Action(IntegrationsPath+"/calendar"), novalidate(),
			csrfInput(csrf),
			h.P(h.Class("inline-check"),
				h.Input(h.ID("calendar-full"), h.Name("full_details"), h.Type("checkbox"), h.Value("yes"), g.If(c.FullDetails, h.Checked())),
				h.Label(h.For("calendar-full"), g.Text("Full names and phone numbers in the feed")),
			),
			h.P(h.Class("hint"), g.Text("Off, events show the customer's first name and a masked number.")),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("Save")),
		),
		h.Form(h.Method("post"), h.Action(IntegrationsPath+"/calendar/rotate"), novalidate(), h.ID("calendar-rotate"),
			csrfInput(csrf),
			h.H3(g.Text("A new address")),
			h.P(g.Text("If the address was shared by mistake, make a new one: the current one stops working at once, "+
				"and every calendar subscribed to it must subscribe to the new one.")),
			h.Div(fieldClass(e),
				fieldError("calendar-confirm-error", e),
				h.P(h.Class("inline-check"),
					h.Input(h.ID("calendar-confirm"), h.Name("confirm"), h.Type("checkbox"), h.Value("yes"),
						invalid(e, "calendar-confirm-error")),
					h.Label(h.For("calendar-confirm"), g.Text("I understand that the current address stops working")),
				),
			),
			h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text("Rotate address")),
		),
	)
}

// endpointsCard lists the webhook endpoints with their recent deliveries, and the form
// that adds one.
func (v integrationsView) endpointsCard(csrf string) g.Node {
	return h.Section(h.Class("card"), h.Aria("labelledby", "endpoints-h"), h.ID("endpoints"),
		h.H2(h.ID("endpoints-h"), g.Text("Webhook endpoints")),
		h.P(g.Text("Each change to your openings, bookings and customers' opt-outs is sent, signed, to the addresses "+
			"below (Standard Webhooks: your developer can verify each request with its library). Failed deliveries are "+
			"tried again for about three days; an endpoint failing for 5 days is disabled.")),
		g.If(len(v.Endpoints) == 0, h.P(h.Class("empty"), g.Text("No endpoints yet."))),
		g.Map(v.Endpoints, func(e endpointView) g.Node { return e.card(csrf) }),
		g.If(len(v.Endpoints) < v.Max, v.Form.form(csrf)),
		g.If(len(v.Endpoints) >= v.Max, h.P(h.Class("muted"),
			g.Textf("A shop may have %d endpoints: delete one to add another.", v.Max))),
	)
}

// card is one endpoint: where, what, its state, its deliveries and its actions.
func (e endpointView) card(csrf string) g.Node {
	id := e.ID.String()
	base := IntegrationsPath + "/endpoints/" + id
	status := h.Span(h.Class("badge badge-ok"), g.Text("Enabled"))
	if e.Disabled {
		status = h.Span(h.Class("badge badge-bad"), g.Text("Disabled"))
	}
	action := func(path, label, class string) g.Node {
		return h.Form(h.Method("post"), h.Action(base+path), csrfInput(csrf),
			h.Button(h.Type("submit"), h.Class(class), g.Text(label), h.Span(h.Class("vh"), g.Text(" ("+e.URL+")"))))
	}
	confirmBox := func(path, label, boxID, boxLabel string) g.Node {
		return h.Form(h.Method("post"), h.Action(base+path), novalidate(), csrfInput(csrf),
			h.P(h.Class("inline-check"),
				h.Input(h.ID(boxID), h.Name("confirm"), h.Type("checkbox"), h.Value("yes")),
				h.Label(h.For(boxID), g.Text(boxLabel)),
			),
			h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text(label), h.Span(h.Class("vh"), g.Text(" ("+e.URL+")"))),
		)
	}
	return h.Article(h.Class("card endpoint"), h.ID("endpoint-"+id), h.Aria("labelledby", "endpoint-h-"+id),
		h.H3(h.ID("endpoint-h-"+id), h.Code(g.Text(e.URL)), g.Text(" "), status),
		g.If(e.Description != "", h.P(g.Text(e.Description))),
		h.P(h.Class("muted"), g.Text("Events: "+e.Events)),
		g.If(e.Disabled && e.DisabledReason != "", h.P(h.Class("alert"), g.Text("Why: "+e.DisabledReason))),
		g.If(e.FailingSince != "", h.P(h.Class("alert"), g.Text("Every delivery has failed since "+e.FailingSince+
			". The endpoint is disabled after 5 days of failures."))),
		g.If(e.PreviousUntil != "", h.P(h.Class("muted"), g.Text("The previous signing secret also signs until "+e.PreviousUntil+"."))),
		g.If(e.Error != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(e.Error))),
		e.deliveries(csrf, base),
		h.Div(h.Class("row endpoint-actions"),
			g.If(e.Disabled, action("/enable", "Enable", "btn")),
			g.If(!e.Disabled, action("/disable", "Disable", "btn")),
			confirmBox("/rotate-secret", "New signing secret", "rotate-"+id,
				"I understand the current secret signs for 24 hours more, then stops"),
			confirmBox("/delete", "Delete endpoint", "delete-"+id, "I understand the endpoint and its deliveries go"),
		),
	)
}

// deliveries is an endpoint's recent deliveries, newest first, each with "Send again".
func (e endpointView) deliveries(csrf, base string) g.Node {
	if len(e.Deliveries) == 0 {
		return h.P(h.Class("empty"), g.Text("No deliveries yet."))
	}
	return h.Table(h.Class("list deliveries"),
		h.Caption(h.Class("vh"), g.Text("Recent deliveries to "+e.URL)),
		h.THead(h.Tr(
			h.Th(h.Scope("col"), g.Text("Event")), h.Th(h.Scope("col"), g.Text("Status")),
			h.Th(h.Scope("col"), h.Class("num"), g.Text("Attempts")), h.Th(h.Scope("col"), g.Text("Last attempt")),
			h.Th(h.Scope("col"), g.Text("Next attempt")), h.Th(h.Scope("col"), h.Span(h.Class("vh"), g.Text("Actions"))),
		)),
		h.TBody(g.Map(e.Deliveries, func(d deliveryView) g.Node {
			return h.Tr(h.ID("delivery-"+d.ID.String()),
				h.Td(h.Data("label", "Event"), h.Code(g.Text(d.Type)), h.Br(), h.Span(h.Class("muted"), g.Text(d.EventAt))),
				h.Td(h.Data("label", "Status"), h.Span(h.Class("badge "+d.StatusClass), g.Text(d.Status))),
				h.Td(h.Data("label", "Attempts"), h.Class("num"), g.Text(strconv.Itoa(d.Attempts))),
				h.Td(h.Data("label", "Last attempt"), g.Text(orDash(d.Last))),
				h.Td(h.Data("label", "Next attempt"), g.Text(orDash(d.Next))),
				h.Td(h.Class("actions"),
					h.Form(h.Method("post"), h.Action(base+"/deliveries/"+d.ID.String()+"/retry"), csrfInput(csrf),
						h.Button(h.Type("submit"), h.Class("btn"), g.Text("Send again"),
							h.Span(h.Class("vh"), g.Text(" ("+d.Type+", "+d.EventAt+")"))))),
			)
		})),
	)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// form adds an endpoint: its address, a note, and the events it wants (none ticked:
// every event).
func (f endpointForm) form(csrf string) g.Node {
	eURL, eDesc, eEvents := f.Errors["url"], f.Errors["description"], f.Errors["enabled_events"]
	return h.Form(h.Method("post"), h.Action(IntegrationsPath+"/endpoints"), novalidate(), h.ID("add-endpoint"),
		csrfInput(csrf),
		h.H3(g.Text("Add an endpoint")),
		g.If(f.Other != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(f.Other))),
		inputField("ep-url", "Address (https://…)", eURL, h.Name("url"), h.Type("text"), inputMode("url"),
			g.Attr("spellcheck", "false"), h.MaxLength("2048"), h.Value(f.URL), h.Placeholder("https://example.com/slot-events")),
		inputField("ep-description", "Note (optional)", eDesc, h.Name("description"), h.Type("text"), h.MaxLength("500"),
			h.Value(f.Description)),
		h.FieldSet(fieldClass(eEvents), h.ID("ep-events"),
			h.Legend(g.Text("Events "), h.Span(h.Class("muted"), g.Text("(none ticked: all of them, including those added later)"))),
			fieldError("ep-events-error", eEvents),
			g.Map(hooks.Types, func(t string) g.Node {
				boxID := "ep-event-" + strings.ReplaceAll(t, ".", "-") // a dot would read as a class in CSS
				return h.P(h.Class("inline-check"),
					h.Input(h.ID(boxID), h.Name("events"), h.Type("checkbox"), h.Value(t), g.If(slices.Contains(f.Events, t), h.Checked())),
					h.Label(h.For(boxID), h.Code(g.Text(t))),
				)
			}),
		),
		h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Add endpoint")),
	)
}

func (v newSecretView) content(string) g.Node {
	heading, notice := "Your new webhook endpoint", "The endpoint was added. Events are sent to it from now on."
	if v.Rotated {
		heading, notice = "Your new signing secret", "The secret was rotated. For 24 hours the previous one signs too, "+
			"so your receiver can switch without losing an event."
	}
	return g.Group{
		h.H1(g.Text(heading)),
		h.P(h.Class("notice"), h.Role("status"), h.ID("secret-notice"), g.Text(notice)),
		h.Section(h.Class("card"), h.Aria("labelledby", "secret-h"),
			h.H2(h.ID("secret-h"), g.Text("Copy the signing secret now: it is shown only once")),
			h.P(g.Text("Your receiver at "), h.Code(g.Text(v.URL)),
				g.Text(" verifies each request with it (the webhook-signature header). If you lose it, make a new one "+
					"from the Integrations page.")),
			h.P(h.Class("secret"), h.Code(h.ID("new-secret"), g.Text(v.Secret))),
			h.P(h.Button(h.Type("button"), h.Class("btn"), h.Data("copy", "new-secret"), g.Attr("hidden"), g.Text("Copy secret"))),
			h.P(h.A(h.Class("btn"), h.Href(IntegrationsPath+"#endpoints"), g.Text("Back to the integrations"))),
		),
	}
}
