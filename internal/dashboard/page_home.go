package dashboard

import (
	"strconv"

	"github.com/google/uuid"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
)

// The dashboard page. The parts marked data-live (totals, open slots, filled slots) are
// what refresh.js swaps in from a fresh copy of the page.

func (v homeView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Your recovered slots")),
		h.P(h.Class("lede"),
			g.Text("Times are shown in "+v.Timezone+"; amounts in "+v.Currency+". "),
			h.Span(h.Class("muted"), h.ID("updated"), g.Text("Updated at "+v.Updated+".")),
		),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		g.If(v.Error != "", h.P(h.Class("alert"), h.Role("alert"), g.Text(v.Error))),
		g.Iff(v.SMSProblem != nil, func() g.Node { return v.SMSProblem.banner() }),
		g.Iff(v.Stripe != nil, func() g.Node { return v.Stripe.banner() }),
		refundsFailedBanner(v.RefundsFailed, csrf),
		h.Div(h.ID("live-totals"), live(),
			h.H2(h.Class("vh"), g.Text("Totals")),
			h.Div(h.Class("cards"), v.Week.card(), v.Month.card(), v.Chart.figure()),
		),
		h.Div(h.Class("split"), h.ID("open"),
			v.declareCard(csrf),
			h.Section(h.Class("card"), h.Aria("labelledby", "open-h"),
				h.H2(h.ID("open-h"), g.Text("Open slots")),
				h.Div(h.ID("live-open"), live(), v.openList(csrf)),
			),
		),
		h.Section(h.Class("card"), h.Aria("labelledby", "filled-h"), h.ID("filled"),
			h.H2(h.ID("filled-h"), g.Text("Filled slots")),
			h.Div(h.ID("live-filled"), live(), v.filledList(csrf), v.filledPager()),
		),
		v.Export.card(),
	}
}

// live marks a part of the page that refresh.js keeps up to date.
func live() g.Node { return g.Attr("data-live") }

func (p smsProblemView) banner() g.Node {
	return h.Section(h.Class("alert attention"), h.ID("sms-problem"), h.Role("alert"), h.Aria("labelledby", "sms-problem-h"),
		h.H2(h.ID("sms-problem-h"), g.Text("Needs your attention: texts are failing because of your SMS number or account")),
		h.P(g.Textf("%d text%s failed in the past week, the last %s (provider code %d). "+
			"Your customers are not at fault and stay on your list. %s", p.Count, plural(p.Count), p.When, p.Code, p.Hint)),
	)
}

// banner says why the shop cannot declare an opening with card payment, and where to fix
// it (the settings page's Stripe card).
func (b stripeBannerView) banner() g.Node {
	why := "Your customers pay into your own Stripe account, which cannot take payments yet."
	if b.Disconnected {
		why = "Your Stripe account was disconnected from this service, so it cannot take payments: " +
			"your open slots were cancelled, and slots already held keep their payment links."
	}
	return h.Section(h.Class("alert attention"), h.ID("stripe-not-ready"), h.Role("alert"), h.Aria("labelledby", "stripe-not-ready-h"),
		h.H2(h.ID("stripe-not-ready-h"), g.Text("Connect Stripe before your next opening with card payment")),
		h.P(g.Text(why+" "), h.A(h.Href("/dashboard/settings#stripe"), g.Text("Connect Stripe in your settings")), g.Text(".")),
	)
}

// refundsFailedBanner lists the payments the owner must refund by hand, each with a
// button to say it was done; nothing when there are none.
func refundsFailedBanner(refunds []refundFailedView, csrf string) g.Node {
	if len(refunds) == 0 {
		return nil
	}
	return h.Section(h.Class("alert attention"), h.ID("refunds-failed"), h.Role("alert"), h.Aria("labelledby", "refunds-failed-h"),
		h.H2(h.ID("refunds-failed-h"),
			g.Textf("Needs your attention: %d refund%s could not be made", len(refunds), plural(len(refunds)))),
		h.P(g.Text("These customers paid after their booking had lapsed, or paid twice, and the automatic refund failed. "),
			h.Strong(g.Text("Refund each payment by hand in your Stripe Dashboard")),
			g.Text(" (Payments: search for the payment id, then Refund), so the customer gets their money back. "+
				"Then mark it refunded here.")),
		h.Ul(g.Map(refunds, func(r refundFailedView) g.Node { return r.item(csrf) })),
	)
}

func (r refundFailedView) item(csrf string) g.Node {
	payment := r.Payment
	if payment == "" {
		payment = "unknown (search Stripe for booking " + r.BookingID.String() + ")"
	}
	return h.Li(
		h.Strong(g.Text(r.Service)), g.Text(", "+r.When+" · "+r.Customer+" "),
		h.Span(h.Class("muted"), g.Text(r.Phone)), g.Text(" · "+r.Amount+" · payment "),
		h.Code(g.Text(payment)), h.Br(),
		h.Span(h.Class("muted"), g.Text("Failed "+r.FailedAt+": "+r.Reason)),
		h.Form(h.Method("post"), h.Action("/dashboard/refunds/"+r.BookingID.String()+"/done"),
			csrfInput(csrf),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("I refunded it"),
				h.Span(h.Class("vh"), g.Text(" ("+r.Service+", "+r.When+", "+r.Amount+")")))),
	)
}

// card is a period's totals: money recovered, slots, fill rate and median wait.
func (t totalsView) card() g.Node {
	paid := "recovered and paid"
	if t.Fees != "" {
		paid = "received, after " + t.Fees + " in platform fees"
	}
	if t.PendingCount != 0 {
		paid += ", plus " + t.Pending + " awaiting payment (" + strconv.Itoa(t.PendingCount) + ")"
	}
	return h.Section(h.Class("card stat"), h.Aria("labelledby", "t-"+t.ID),
		h.H3(h.ID("t-"+t.ID), g.Text(t.Label+" "), h.Span(h.Class("muted"), g.Text(t.Range))),
		h.P(h.Class("big"), g.Text(t.Money)),
		h.P(h.Class("muted"), g.Text(paid)),
		h.Dl(h.Class("figures"),
			h.Div(h.Dt(g.Text("Slots recovered")), h.Dd(g.Text(strconv.Itoa(t.Slots)))),
			h.Div(h.Dt(g.Text("Fill rate")), h.Dd(g.Text(t.FillRate+" "), h.Span(h.Class("muted"), g.Text(t.FillDetail)))),
			h.Div(h.Dt(g.Text("Median time to booking")), h.Dd(g.Text(t.Median))),
		),
	)
}

// figure is the weekly money chart as inline SVG; chartView has every coordinate.
func (c chartView) figure() g.Node {
	return h.Figure(h.Class("card chart-card"),
		h.FigCaption(h.Strong(g.Text("Money recovered per week")), g.Text(" "),
			h.Span(h.Class("muted"), g.Textf("last %d weeks, %s in all", len(c.Bars), c.Total))),
		h.SVG(h.Class("chart"), g.Attr("viewBox", "0 0 "+strconv.Itoa(c.Width)+" "+strconv.Itoa(c.Height)),
			h.Role("img"), h.Aria("labelledby", "chart-title chart-desc"), g.Attr("preserveAspectRatio", "xMidYMid meet"),
			g.El("title", h.ID("chart-title"), g.Text("Money recovered per week")),
			g.El("desc", h.ID("chart-desc"), g.Text(c.Desc)),
			g.El("line", h.Class("axis"), g.Attr("x1", "0"), g.Attr("y1", strconv.Itoa(c.Baseline)),
				g.Attr("x2", strconv.Itoa(c.Width)), g.Attr("y2", strconv.Itoa(c.Baseline))),
			g.Map(c.Bars, chartBar.svg),
		),
	)
}

func (b chartBar) svg() g.Node {
	class := "bar"
	if b.Current {
		class += " bar-current"
	}
	return g.El("g",
		g.El("rect", h.Class(class), g.Attr("x", strconv.Itoa(b.X)), g.Attr("y", strconv.Itoa(b.Y)),
			h.Width(strconv.Itoa(b.W)), h.Height(strconv.Itoa(b.H)), g.Attr("rx", "3"),
			g.El("title", g.Text(b.Title))),
		g.El("text", h.Class("bar-value"), g.Attr("x", strconv.Itoa(b.MidX)), g.Attr("y", strconv.Itoa(b.ValueY)),
			g.Attr("text-anchor", "middle"), g.Text(b.Value)),
		g.El("text", h.Class("bar-label"), g.Attr("x", strconv.Itoa(b.MidX)), g.Attr("y", strconv.Itoa(b.LabelY)),
			g.Attr("text-anchor", "middle"), g.Text(b.Label)),
	)
}

// declareCard is the "declare an opening" form, with what was typed and a message
// next to each input that is wrong.
func (v homeView) declareCard(csrf string) g.Node {
	f := v.Form
	return h.Section(h.Class("card"), h.Aria("labelledby", "declare-h"),
		h.H2(h.ID("declare-h"), g.Text("Declare an opening")),
		h.P(h.Class("muted"), g.Text("When a customer cancels, tell us the slot and we text your other customers.")),
		f.summary(),
		h.Form(h.Method("post"), h.Action("/dashboard/openings"), novalidate(),
			csrfInput(csrf),
			f.startField(v.Today),
			f.durationField(),
			f.staffField(v.People),
			f.serviceField(v.Services),
			f.priceField(v.Currency, len(v.Services) > 0),
			h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Declare opening")),
		),
	)
}

// summary lists the form's problems above it, each linking to its input; nothing when
// there are none.
func (f declareForm) summary() g.Node {
	if len(f.Summary) == 0 && f.Other == "" {
		return nil
	}
	return h.Div(h.Class("error-summary"), h.Role("alert"), h.Aria("labelledby", "error-summary-h"), h.TabIndex("-1"),
		h.H3(h.ID("error-summary-h"), g.Text("Check the opening")),
		h.Ul(
			g.Map(f.Summary, func(e formError) g.Node {
				return h.Li(h.A(h.Href("#"+e.Anchor), g.Text(e.Message)))
			}),
			g.If(f.Other != "", h.Li(g.Text(f.Other))),
		),
	)
}

func (f declareForm) startField(today string) g.Node {
	e := f.Errors["starts_at"]
	return h.FieldSet(fieldClass(e),
		h.Legend(g.Text("Start")),
		fieldError("starts-error", e),
		h.Div(h.Class("row"),
			h.Div(h.Class("date"),
				h.Label(h.For("starts-date"), g.Text("Date")),
				h.Input(h.ID("starts-date"), h.Name("date"), h.Type("date"), h.Value(f.Date), h.Min(today), h.Required(),
					invalid(e, "starts-error")),
			),
			h.Div(h.Class("time"),
				h.Label(h.For("starts-time"), g.Text("Time")),
				h.Input(h.ID("starts-time"), h.Name("time"), h.Type("time"), h.Value(f.Time), h.Step("300"), h.Required(),
					invalid(e, "starts-error")),
			),
		),
	)
}

func (f declareForm) durationField() g.Node {
	e := f.Errors["duration_minutes"]
	return inputField("duration", "Length in minutes", e, h.Name("duration_minutes"), h.Type("number"), inputMode("numeric"),
		h.Min("1"), h.Max("1440"), h.Step("1"), h.Value(f.Duration), h.Class("short"), h.Required())
}

// staffField picks whose freed time the opening is, when the shop has people.
func (f declareForm) staffField(people []catalog.Staff) g.Node {
	if len(people) == 0 && f.StaffID == "" {
		return nil
	}
	e := f.Errors["staff_id"]
	return h.Div(fieldClass(e),
		h.Label(h.For("staff"), g.Text("Person "), h.Span(h.Class("muted"), g.Text("(optional)"))),
		fieldError("staff-error", e),
		h.Select(h.ID("staff"), h.Name("staff_id"), invalid(e, "staff-error"),
			h.Option(h.Value(""), g.If(f.StaffID == "", h.Selected()), g.Text("Anyone")),
			g.Map(people, func(p catalog.Staff) g.Node {
				return h.Option(h.Value(p.ID.String()), g.If(f.StaffID == p.ID.String(), h.Selected()), g.Text(p.Name))
			}),
		),
	)
}

// serviceField is the opening's service: typed, or with services picked from them
// (optional: each customer is then offered their own service that fits).
func (f declareForm) serviceField(services []catalog.Service) g.Node {
	e := f.Errors["service"]
	if len(services) == 0 {
		return inputField("service", "Service", e, h.Name("service"), h.Type("text"), h.MaxLength("100"), h.Value(f.Service),
			h.Placeholder("Haircut"), h.Required())
	}
	return h.Div(fieldClass(e),
		h.Label(h.For("service"), g.Text("Service "), h.Span(h.Class("muted"), g.Text("(optional)"))),
		h.P(h.Class("hint"), h.ID("service-hint"), g.Text("Leave it to each customer's own wanted service that fits the time.")),
		fieldError("service-error", e),
		h.Select(h.ID("service"), h.Name("service"), h.Aria("describedby", describedBy("service-hint", e, "service-error")),
			g.If(e != "", h.Aria("invalid", "true")),
			h.Option(h.Value(""), g.If(f.Service == "", h.Selected()), g.Text("Each customer's own")),
			g.Map(services, func(s catalog.Service) g.Node {
				return h.Option(h.Value(s.Name), g.If(strings.EqualFold(f.Service, s.Name), h.Selected()),
					g.Textf("%s (%d min)", s.Name, s.DurationMinutes))
			}),
		),
	)
}

// priceField is the opening's price; optional with services (the service's own).
func (f declareForm) priceField(currency string, withServices bool) g.Node {
	e := f.Errors["price_cents"]
	return h.Div(fieldClass(e),
		h.Label(h.For("price"), g.Text("Price "), h.Span(h.Class("muted"), g.Text("in "+currency)),
			g.If(withServices, h.Span(h.Class("muted"), g.Text(" (optional: the service's)")))),
		fieldError("price-error", e),
		h.Input(h.ID("price"), h.Name("price"), h.Type("text"), inputMode("decimal"), h.Value(f.Price),
			h.Placeholder("45.00"), h.Class("short"), g.If(!withServices, h.Required()), invalid(e, "price-error")),
	)
}

// openList is the table of open slots with their offers and waves, each with a cancel
// button.
func (v homeView) openList(csrf string) g.Node {
	if len(v.Open) == 0 {
		return h.P(h.Class("empty"), g.Text("No open slots right now. Declare one when a customer cancels."))
	}
	return g.Group{
		h.Table(h.Class("list"),
			h.THead(h.Tr(colHead("When"), colHead("Service"), colHead("Offers"), colHead("Waves"), actionsHead())),
			h.TBody(g.Map(v.Open, func(o openView) g.Node { return o.row(csrf) })),
		),
		g.If(v.OpenMore, h.P(h.Class("muted"), g.Textf("Only the soonest %d open slots are shown.", len(v.Open)))),
	}
}

func (o openView) row(csrf string) g.Node {
	return h.Tr(h.Class("open-row"), h.Data("opening", o.ID.String()),
		h.Td(h.Data("label", "When"), h.Div(
			h.Time(h.DateTime(o.ISO), g.Text(o.When)), h.Br(),
			h.Span(h.Class("muted"), g.Text(strconv.Itoa(o.Duration)+" min")))),
		h.Td(h.Data("label", "Service"), h.Div(o.what())),
		h.Td(h.Data("label", "Offers"), h.Div(
			g.Text(strconv.Itoa(o.OffersSent)+" sent"), h.Br(),
			h.Span(h.Class("muted nowrap"), g.Textf("%d yes · %d no", o.Yes, o.No)))),
		h.Td(h.Data("label", "Waves"), h.Div(o.waves(),
			g.If(o.Record, h.A(h.Class("record-link"), h.Href(OpeningPath+"/"+o.ID.String()), g.Text("Who was texted, and why"),
				h.Span(h.Class("vh"), g.Text(" for "+o.When)))))),
		h.Td(h.Data("label", ""), h.Class("actions"), h.Div(
			h.Form(h.Method("post"), h.Action("/dashboard/openings/"+o.ID.String()+"/cancel"),
				csrfInput(csrf),
				h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text("Cancel"),
					h.Span(h.Class("vh"), g.Text(" the opening "+cmpOr(o.Service, "any service")+", "+o.When))),
			))),
	)
}

// what is the opening's service and price (with services, maybe none: each customer is
// offered their own), whose time it is, and whether it is the rest of a gap.
func (o openView) what() g.Node {
	return g.Group{
		g.If(o.Service == "", h.Span(h.Class("muted"), g.Text("Customers' own services"))),
		g.If(o.Service != "", g.Group{g.Text(o.Service), h.Br(), h.Span(h.Class("muted"), g.Text(o.Price))}),
		g.If(o.Staff != "", g.Group{h.Br(), h.Span(h.Class("staff"), g.Text("with "+o.Staff))}),
		g.If(o.Rest, g.Group{h.Br(), h.Span(h.Class("muted"), g.Text("rest of a gap"))}),
	}
}

// waves says what each wave of an opening did and when the next is due.
func (o openView) waves() g.Node {
	var next g.Node
	switch {
	case o.Next != "":
		next = h.P(h.Class("next"), g.Text("Next: "+o.Next))
	case len(o.Waves) == 0:
		next = h.P(h.Class("muted"), g.Text("No wave scheduled"))
	}
	return g.Group{
		g.If(len(o.Waves) > 0, h.Ul(h.Class("waves"), g.Map(o.Waves, func(w waveView) g.Node {
			return h.Li(h.Strong(g.Text(w.Label)), g.Text(": "+w.Detail))
		}))),
		next,
	}
}

// filledList is the page's table of filled slots, newest first.
func (v homeView) filledList(csrf string) g.Node {
	switch {
	case len(v.Filled) > 0:
		return h.Table(h.Class("list"),
			h.THead(h.Tr(colHead("When"), colHead("Service"), colHead("Customer"), colHead("Payment"), numHead("Amount"), colHead("Came?"))),
			h.TBody(g.Map(v.Filled, func(f filledView) g.Node { return f.row(csrf, v.Page) })),
		)
	case v.Page > 1:
		return h.P(h.Class("empty"), g.Text("No more filled slots."))
	}
	return h.P(h.Class("empty"), g.Text("No slots recovered yet. They appear here as soon as a customer says YES."))
}

func (f filledView) row(csrf string, page int) g.Node {
	return h.Tr(h.Class("filled-row"), h.Data("opening", f.ID.String()),
		h.Td(h.Data("label", "When"), h.Div(
			h.Time(h.DateTime(f.ISO), g.Text(f.When)), g.Text(" "),
			h.Span(h.Class("muted nowrap"), g.Text("· "+strconv.Itoa(f.Duration)+" min")))),
		h.Td(h.Data("label", "Service"), h.Div(g.Text(f.Service),
			g.If(f.Status != "Filled", g.Group{g.Text(" "), h.Span(h.Class("muted"), g.Text("· "+f.Status))}),
			g.If(f.Staff != "", g.Group{h.Br(), h.Span(h.Class("staff"), g.Text("with "+f.Staff))}))),
		h.Td(h.Data("label", "Customer"), h.Div(
			g.Text(f.Customer), h.Br(), h.Span(h.Class("muted phone"), g.Text(f.Phone)))),
		h.Td(h.Data("label", "Payment"), h.Div(h.Span(h.Class("badge badge-"+f.PayClass), g.Text(f.Payment)))),
		h.Td(h.Data("label", "Amount"), h.Class("num"), h.Div(g.Text(f.Amount),
			g.If(f.Fee != "", g.Group{h.Br(), h.Span(h.Class("muted nowrap"), g.Text("fee "+f.Fee+" · you get "+f.Net))}))),
		h.Td(h.Data("label", "Came?"), h.Class("actions"), h.Div(f.attendance(csrf, page),
			g.If(f.FeeNote != "", h.P(h.Class("muted fee-note"), g.Text(f.FeeNote))),
			g.If(f.Record, h.A(h.Class("record-link"), h.Href(OpeningPath+"/"+f.ID.String()), g.Text("Offers"),
				h.Span(h.Class("vh"), g.Text(" for "+f.When)))))),
	)
}

// attendance is the booking's mark and the buttons that set or take it back: Came and
// No-show once its time has come, Undo for 24 hours after a mark.
func (f filledView) attendance(csrf string, page int) g.Node {
	if f.BookingID == uuid.Nil {
		return nil
	}
	button := func(mark, label, class string) g.Node {
		return h.Form(h.Method("post"), h.Action("/dashboard/bookings/"+f.BookingID.String()+"/attendance"), h.Class("inline"),
			csrfInput(csrf),
			h.Input(h.Type("hidden"), h.Name("mark"), h.Value(mark)),
			h.Input(h.Type("hidden"), h.Name("page"), h.Value(strconv.Itoa(page))),
			h.Button(h.Type("submit"), h.Class(class), g.Text(label), h.Span(h.Class("vh"), g.Text(" ("+f.Customer+", "+f.When+")"))),
		)
	}
	switch {
	case f.Attendance == "attended":
		return h.Div(h.Span(h.Class("badge badge-ok"), g.Text("Came")), g.If(f.CanChange, button("none", "Undo", "btn btn-small")))
	case f.Attendance == "no_show":
		return h.Div(h.Span(h.Class("badge badge-bad"), g.Text("No-show")), g.If(f.CanChange, button("none", "Undo", "btn btn-small")))
	case !f.CanMark:
		// Before the visit: a customer who calls to cancel is entered here (the policy
		// they accepted applies by its hours: late, or refunded in full).
		return h.Div(h.Span(h.Class("muted"), g.Text("after the visit")),
			h.Form(h.Method("post"), h.Action("/dashboard/bookings/"+f.BookingID.String()+"/late_cancel"), h.Class("inline"),
				csrfInput(csrf),
				h.Button(h.Type("submit"), h.Class("btn btn-small"), g.Text("They cancelled"),
					h.Span(h.Class("vh"), g.Text(" ("+f.Customer+", "+f.When+")")))))
	}
	return h.Div(button("attended", "Came", "btn btn-small"), button("no_show", "No-show", "btn btn-small"))
}

// filledPager links the newer and older pages of filled slots; nothing when there is
// one page.
func (v homeView) filledPager() g.Node {
	if v.PrevPage == 0 && v.NextPage == 0 {
		return nil
	}
	return h.Nav(h.Class("pager"), h.Aria("label", "Filled slots pages"),
		g.If(v.PrevPage != 0, h.A(h.Href("/dashboard?page="+strconv.Itoa(v.PrevPage)+"#filled"), h.Rel("prev"), g.Text("← Newer"))),
		h.Span(g.Text("Page "+strconv.Itoa(v.Page))),
		g.If(v.NextPage != 0, h.A(h.Href("/dashboard?page="+strconv.Itoa(v.NextPage)+"#filled"), h.Rel("next"), g.Text("Older →"))),
	)
}

// card is the CSV export's form.
func (f exportForm) card() g.Node {
	return h.Section(h.Class("card"), h.Aria("labelledby", "export-h"),
		h.H2(h.ID("export-h"), g.Text("Export filled slots")),
		h.P(h.Class("muted"), g.Text("A CSV file of the filled slots whose appointment falls between these days (phones masked).")),
		h.Form(h.Method("get"), h.Action("/dashboard/export.csv"), h.Class("row export"),
			h.Div(
				h.Label(h.For("export-from"), g.Text("First day")),
				h.Input(h.ID("export-from"), h.Name("from"), h.Type("date"), h.Value(f.From), h.Required()),
			),
			h.Div(
				h.Label(h.For("export-to"), g.Text("Last day")),
				h.Input(h.ID("export-to"), h.Name("to"), h.Type("date"), h.Value(f.To), h.Required()),
			),
			h.Div(h.Class("end"), h.Button(h.Type("submit"), h.Class("btn"), g.Text("Download CSV"))),
		),
	)
}

// colHead is a table's column heading.
func colHead(text string) g.Node { return h.Th(h.Scope("col"), g.Text(text)) }

// numHead is the heading of a column of numbers.
func numHead(text string) g.Node { return h.Th(h.Scope("col"), h.Class("num"), g.Text(text)) }

// actionsHead heads the column of buttons: named for screen readers only.
func actionsHead() g.Node { return h.Th(h.Scope("col"), h.Span(h.Class("vh"), g.Text("Actions"))) }
