package dashboard

import (
	"strconv"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"
)

// An opening's record page, a customer's offers and figures, and the filled slots'
// attendance buttons (record.go).

func (v recordView) content(string) g.Node {
	what := cmpOr(v.Service, "Customers' own services")
	return g.Group{
		h.P(h.A(h.Href("/dashboard#open"), g.Text("← Your recovered slots"))),
		h.H1(g.Text("Opening "), h.Time(h.DateTime(v.ISO), g.Text(v.When))),
		h.P(h.Class("lede"), g.Text(what+" · "+strconv.Itoa(v.Duration)+" min"),
			g.If(v.Staff != "", g.Text(" · with "+v.Staff)), g.Text(" · "+v.Status)),
		v.whyNotCard(),
		h.Section(h.Class("card"), h.ID("waves"), h.Aria("labelledby", "waves-h"),
			h.H2(h.ID("waves-h"), g.Text("Who was texted, and why")),
			g.If(len(v.Waves) == 0, h.P(h.Class("empty"), g.Text("No wave has gone out for this opening yet."))),
			g.Map(v.Waves, recordWave.node),
		),
		h.Section(h.Class("card"), h.ID("replies"), h.Aria("labelledby", "replies-h"),
			h.H2(h.ID("replies-h"), g.Text("Replies")),
			g.If(len(v.Replies) == 0, h.P(h.Class("empty"), g.Text("No replies yet."))),
			g.If(len(v.Replies) > 0, h.Table(h.Class("list"),
				h.THead(h.Tr(colHead("Customer"), colHead("When"), colHead("Answer"))),
				h.TBody(g.Map(v.Replies, func(r recordReply) g.Node {
					return h.Tr(
						h.Td(h.Data("label", "Customer"), h.Div(customerLink(r.CustomerID.String(), r.Name))),
						h.Td(h.Data("label", "When"), h.Div(g.Text(r.When))),
						h.Td(h.Data("label", "Answer"), h.Div(g.Text(r.Outcome))),
					)
				})),
			)),
		),
	}
}

// whyNotCard is the "why not …?" search: a name or phone, and what the record says of
// each customer it matches.
func (v recordView) whyNotCard() g.Node {
	return h.Section(h.Class("card"), h.ID("why-not"), h.Aria("labelledby", "why-not-h"),
		h.H2(h.ID("why-not-h"), g.Text("Why not …?")),
		h.Form(h.Method("get"), h.Action(OpeningPath+"/"+v.ID.String()+"#why-not"), h.Role("search"),
			h.Div(fieldClass(v.Error),
				h.Label(h.For("q"), g.Text("A customer's name or phone")),
				fieldError("q-error", v.Error),
				h.Input(h.ID("q"), h.Name("q"), h.Type("search"), h.MaxLength("100"), h.Value(v.Query),
					g.If(v.Error != "", h.Aria("describedby", "q-error"))),
			),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("Explain")),
		),
		g.If(v.Searched && v.Error == "" && len(v.Answers) == 0,
			h.P(h.Class("empty"), h.Role("status"), g.Text("No customer matches “"+v.Query+"”."))),
		g.If(len(v.Answers) > 0, h.Ul(h.Class("why-not"), h.Role("status"), g.Map(v.Answers, func(a whyNotAnswer) g.Node {
			return h.Li(h.Strong(customerLink(a.CustomerID.String(), a.Name)), g.Text(" "),
				h.Span(h.Class("muted phone"), g.Text(a.Phone)), h.Br(), g.Text(a.Words))
		}))),
	)
}

func (w recordWave) node() g.Node {
	return h.Div(h.Class("wave-record"),
		h.H3(g.Text(w.Title)),
		h.P(h.Class("muted"), g.Text("Ranked by "+w.Ranking+".")),
		g.If(len(w.Texted) == 0, h.P(g.Text("No one was texted."))),
		g.If(len(w.Texted) > 0, h.Table(h.Class("list"),
			h.THead(h.Tr(numHead("#"), colHead("Customer"), colHead("Why there"))),
			h.TBody(g.Map(w.Texted, func(t recordTexted) g.Node {
				return h.Tr(
					h.Td(h.Data("label", "#"), h.Class("num"), h.Div(g.Text(rankText(t.Rank)))),
					h.Td(h.Data("label", "Customer"), h.Div(customerLink(t.CustomerID.String(), t.Name))),
					h.Td(h.Data("label", "Why there"), h.Div(g.Text(t.Reason))),
				)
			})),
		)),
		g.If(w.SkippedTotal == 0, h.P(h.Class("muted"), g.Text("No one was left out."))),
		g.If(w.SkippedTotal > 0, h.Div(
			h.P(g.Textf("Left out: %d customer%s.", w.SkippedTotal, plural(w.SkippedTotal))),
			h.Ul(h.Class("skipped"), g.Map(w.Skipped, func(s skipCount) g.Node {
				return h.Li(h.Strong(g.Text(strconv.Itoa(s.N))), g.Text(" "+s.Label))
			})),
		)),
	)
}

func rankText(r int) string {
	if r <= 0 {
		return "–"
	}
	return strconv.Itoa(r)
}

// customerLink links a customer's page; an erased customer's id still names their row.
func customerLink(id, name string) g.Node {
	return h.A(h.Href("/dashboard/customers/"+id), g.Text(name))
}

// node is a customer's offers and figures on their page.
func (r *customerRecordView) node(id, csrf string) g.Node {
	if r == nil {
		return nil
	}
	st := r.Stats
	return h.Section(h.Class("card"), h.ID("record"), h.Aria("labelledby", "record-h"),
		h.H2(h.ID("record-h"), g.Text("Offers and visits")),
		h.Dl(h.Class("figures"),
			figure("Offers in 90 days", strconv.Itoa(st.Offers90d)),
			figure("Bookings in 90 days", strconv.Itoa(st.Bookings90d)),
			figure("Came", strconv.Itoa(st.Attended)),
			figure("No-shows", strconv.Itoa(st.NoShows)),
			figure("Holds not paid", strconv.Itoa(st.LapsedHolds)),
			figure("Last offered", cmpOr(r.LastOffered, "never")),
			figure("Last booked", cmpOr(r.LastBooked, "never")),
		),
		g.If(st.NoShows > 0, h.Form(h.Method("post"), h.Action("/dashboard/customers/"+id+"/clear_no_shows"),
			csrfInput(csrf),
			h.P(h.Class("hint"), g.Text("Their no-shows so far stop counting against them for your no-show rule; they stay in the figures.")),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("Clear their no-shows")),
		)),
		h.H3(g.Text("Latest offers")),
		g.If(len(r.History) == 0, h.P(h.Class("empty"), g.Text("Not offered anything yet."))),
		g.If(len(r.History) > 0, h.Table(h.Class("list"),
			h.THead(h.Tr(colHead("Opening"), colHead("Texted"), colHead("Wave"), colHead("Outcome"))),
			h.TBody(g.Map(r.History, func(e historyRow) g.Node {
				return h.Tr(
					h.Td(h.Data("label", "Opening"), h.Div(h.A(h.Href(OpeningPath+"/"+e.OpeningID.String()), g.Text(e.Opening)))),
					h.Td(h.Data("label", "Texted"), h.Div(g.Text(e.When))),
					h.Td(h.Data("label", "Wave"), h.Div(g.Text(e.Wave))),
					h.Td(h.Data("label", "Outcome"), h.Div(g.Text(e.Outcome))),
				)
			})),
		)),
		g.If(r.More, h.P(h.Class("muted"), g.Textf("Only the latest %d offers are shown; the API has them all.", historyRows))),
	)
}

// figure is one term and its value in a list of figures.
func figure(term, value string) g.Node {
	return h.Div(h.Dt(g.Text(term)), h.Dd(g.Text(value)))
}
