package dashboard

import (
	"strconv"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"
)

// The Book page: a day of the shop's appointments, a section per person.

func (v bookView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Book"), h.Span(h.Class("vh"), g.Text(": "+v.Day))),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		g.If(v.Error != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(v.Error))),
		h.Nav(h.Class("row day-nav"), h.Aria("label", "Days"),
			h.A(h.Class("btn"), h.ID("day-prev"), h.Href(BookPath+"?day="+v.Prev), h.Rel("prev"), g.Text("← Previous day")),
			h.P(h.ID("day"), h.Class("day"), h.Strong(g.Text(v.Day)), g.If(v.Today, g.Text(" (today)"))),
			h.A(h.Class("btn"), h.ID("day-next"), h.Href(BookPath+"?day="+v.Next), h.Rel("next"), g.Text("Next day →")),
			g.If(!v.Today, h.A(h.Class("btn btn-quiet"), h.Href(BookPath), g.Text("Today"))),
		),
		g.If(v.AutoDeclare, h.P(h.Class("muted"), g.Text("A cancelled appointment still ahead is offered as an opening by itself "+
			"(Settings: declare cancellations automatically)."))),
		g.If(!v.AutoDeclare, h.P(h.Class("muted"), g.Text("A cancelled appointment still ahead waits for you: press "+
			"\"Offer it\" to offer its time to your customers."))),
		g.If(len(v.Copy) > 0, h.Section(h.Class("card"), h.ID("moves-to-copy"), h.Aria("labelledby", "moves-to-copy-h"),
			h.H2(h.ID("moves-to-copy-h"), g.Text("Moves to copy into your calendar")),
			h.P(h.Class("muted"), g.Text("These customers took an earlier time by text. Your booking system still shows "+
				"their old time: move it there, then press \u201cCopied\u201d.")),
			h.Ul(h.Class("moves"), g.Map(v.Copy, func(m copyView) g.Node {
				return h.Li(h.ID("move-"+m.ID.String()), g.Text(m.Text+" "),
					h.Form(h.Method("post"), h.Action(BookPath+"/"+m.ID.String()+"/copied"), h.Class("inline"), csrfInput(csrf),
						h.Input(h.Type("hidden"), h.Name("day"), h.Value(v.Date)),
						h.Button(h.Type("submit"), h.Class("btn"), g.Text("Copied"),
							h.Span(h.Class("vh"), g.Text(" ("+m.Text+")")))),
					g.If(m.Problem != "", h.P(h.Class("field-error"), g.Text(m.Problem))))
			})),
		)),
		g.If(v.Count == 0, h.P(h.Class("empty"), g.Text("No appointments on this day."))),
		g.Map(v.People, func(p personView) g.Node { return p.section(csrf, v.Date) }),
		g.If(v.More, h.P(h.Class("muted"), g.Text("This day has more appointments than the page shows."))),
		g.If(len(v.Chains) > 0, h.Section(h.Class("card"), h.ID("chains"), h.Aria("labelledby", "chains-h"),
			h.H2(h.ID("chains-h"), g.Text("Chains of move-ups")),
			h.P(h.Class("muted"), g.Text("A customer who moves up frees their later time, which is offered in turn.")),
			h.Ol(h.Class("chains"), g.Map(v.Chains, func(c chainView) g.Node {
				return h.Li(h.Class("chain"), g.Text(strings.Join(c.Links, " → ")), h.Br(),
					h.Span(h.Class("muted"), g.Text(c.Summary)))
			})),
		)),
	}
}

// section is one person's appointments of the day, by start.
func (p personView) section(csrf, day string) g.Node {
	hid := "person-h-" + p.Key
	return h.Section(h.Class("card"), h.ID("person-"+p.Key), h.Aria("labelledby", hid),
		h.H2(h.ID(hid), g.Text(p.Name), g.Text(" "),
			h.Span(h.Class("muted"), g.Text("("+strconv.Itoa(len(p.Appointments))+" appointment"+plural(len(p.Appointments))+")"))),
		h.Table(h.Class("list appointments"),
			h.Caption(h.Class("vh"), g.Text("Appointments with "+p.Name)),
			h.THead(h.Tr(
				h.Th(h.Scope("col"), g.Text("Time")), h.Th(h.Scope("col"), g.Text("Service")),
				h.Th(h.Scope("col"), g.Text("Customer")), h.Th(h.Scope("col"), g.Text("Status")),
				h.Th(h.Scope("col"), g.Text("From")), h.Th(h.Scope("col"), g.Text("Opening")),
			)),
			h.TBody(g.Map(p.Appointments, func(a appointmentView) g.Node { return a.row(csrf, day) })),
		),
	)
}

// row is one appointment, with what its cancellations declared and, when its opening
// waits, "Offer it".
func (a appointmentView) row(csrf, day string) g.Node {
	id := a.ID.String()
	customer := a.Customer
	if customer == "" {
		customer = "(no name)"
	}
	return h.Tr(h.ID("appointment-"+id),
		h.Td(h.Data("label", "Time"), g.Text(a.Time), h.Br(), h.Span(h.Class("muted"), g.Text(strconv.Itoa(a.Minutes)+" min"))),
		h.Td(h.Data("label", "Service"), g.Text(orDash(a.Service))),
		h.Td(h.Data("label", "Customer"), g.Text(customer),
			g.If(a.Phone != "", g.Group{h.Br(), h.Span(h.Class("muted"), g.Text(a.Phone))})),
		h.Td(h.Data("label", "Status"), h.Span(h.Class("badge "+a.StatusClass), g.Text(a.Status))),
		h.Td(h.Data("label", "From"), g.Text(a.Source)),
		h.Td(h.Data("label", "Opening"),
			g.If(len(a.Declarations) == 0, g.Text("—")),
			g.If(len(a.Declarations) > 0, h.Ul(h.Class("declarations"), g.Map(a.Declarations, func(s string) g.Node {
				return h.Li(g.Text(s))
			}))),
			g.If(a.CanOffer, h.Form(h.Method("post"), h.Action(BookPath+"/"+id+"/offer"), csrfInput(csrf),
				h.Input(h.Type("hidden"), h.Name("day"), h.Value(day)),
				h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Offer it"),
					h.Span(h.Class("vh"), g.Text(" ("+a.Time+", "+customer+")"))),
			)),
		),
	)
}
