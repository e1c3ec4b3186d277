package dashboard

import (
	"slices"
	"strconv"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
)

// The Staff and Services pages.

func (v staffView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Your staff")),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		h.P(h.Class("lede"), g.Text("An opening can be one person's freed time: customers who want only some of your people "+
			"are offered only theirs. People are never deleted: make someone inactive and they keep their history.")),
		h.Div(h.Class("split"),
			h.Section(h.Class("card"), h.Aria("labelledby", "add-staff-h"),
				h.H2(h.ID("add-staff-h"), g.Text("Add a person")),
				h.Form(h.Method("post"), h.Action(StaffPath), novalidate(),
					csrfInput(csrf),
					inputField("staff-name", "Name", v.AddError, h.Name("name"), h.Type("text"), h.MaxLength("100"),
						h.Value(v.Add), h.Required()),
					h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Add")),
				),
			),
			h.Section(h.Class("card"), h.Aria("labelledby", "staff-h"),
				h.H2(h.ID("staff-h"), g.Text("People")),
				v.list(csrf),
			),
		),
	}
}

func (v staffView) list(csrf string) g.Node {
	if len(v.People) == 0 {
		return h.P(h.Class("empty"), g.Text("Nobody yet. Add the people whose time customers book."))
	}
	return h.Table(h.Class("list"), h.ID("staff-list"),
		h.THead(h.Tr(colHead("Name"), colHead("Status"), actionsHead())),
		h.TBody(g.Map(v.People, func(p catalog.Staff) g.Node { return v.row(p, csrf) })),
	)
}

func (v staffView) row(p catalog.Staff, csrf string) g.Node {
	id := "staff-" + p.ID.String()
	name, msg := p.Name, ""
	if v.EditID == p.ID {
		name, msg = v.Edit, v.EditError
	}
	status, class, toggle, label := "Active", "badge badge-ok", "no", "Make inactive"
	if !p.Active {
		status, class, toggle, label = "Inactive", "badge badge-muted", "yes", "Make active"
	}
	return h.Tr(h.Class("staff-row"), h.Data("staff", p.ID.String()),
		h.Td(h.Data("label", "Name"), h.Div(
			h.Form(h.Method("post"), h.Action(StaffPath+"/"+p.ID.String()), h.Class("row"), novalidate(),
				csrfInput(csrf),
				h.Div(fieldClass(msg),
					h.Label(h.For(id), h.Class("vh"), g.Text("Name of "+p.Name)),
					fieldError(id+"-error", msg),
					h.Input(h.ID(id), h.Name("name"), h.Type("text"), h.MaxLength("100"), h.Value(name), invalid(msg, id+"-error")),
				),
				h.Div(h.Class("end"), h.Button(h.Type("submit"), h.Class("btn"), g.Text("Rename"),
					h.Span(h.Class("vh"), g.Text(" "+p.Name)))),
			))),
		h.Td(h.Data("label", "Status"), h.Div(h.Span(h.Class(class), g.Text(status)))),
		h.Td(h.Data("label", ""), h.Class("actions"), h.Div(
			h.Form(h.Method("post"), h.Action(StaffPath+"/"+p.ID.String()),
				csrfInput(csrf),
				h.Input(h.Type("hidden"), h.Name("active"), h.Value(toggle)),
				h.Button(h.Type("submit"), h.Class("btn"), g.Text(label), h.Span(h.Class("vh"), g.Text(" ("+p.Name+")"))),
			))),
	)
}

func (v servicesView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Your services")),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		h.P(h.Class("lede"), g.Text("Once you have services, each customer is offered the first of their wanted services that fits "+
			"an opening (its length, its person), at its price; what a booking leaves of a gap is offered in turn.")),
		h.Div(h.Class("split"),
			h.Section(h.Class("card"), h.Aria("labelledby", "add-service-h"),
				h.H2(h.ID("add-service-h"), g.Text("Add a service")),
				v.Form.summary(),
				h.Form(h.Method("post"), h.Action(ServicesPath), novalidate(),
					csrfInput(csrf),
					v.Form.fields(v.Currency, v.People),
					h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Add service")),
				),
			),
			h.Section(h.Class("card"), h.Aria("labelledby", "services-h"),
				h.H2(h.ID("services-h"), g.Text("Services")),
				v.list(),
			),
		),
	}
}

func (v servicesView) list() g.Node {
	if len(v.Services) == 0 {
		return h.P(h.Class("empty"), g.Text("No services yet: openings are offered as you declare them."))
	}
	return h.Table(h.Class("list"), h.ID("service-list"),
		h.THead(h.Tr(colHead("Service"), numHead("Minutes"), numHead("Price"), colHead("Who"), colHead("Status"), actionsHead())),
		h.TBody(g.Map(v.Services, func(r serviceRow) g.Node {
			status, class := "Active", "badge badge-ok"
			if !r.Active {
				status, class = "Inactive", "badge badge-muted"
			}
			return h.Tr(h.Class("service-row"), h.Data("service", r.ID.String()),
				h.Td(h.Data("label", "Service"), h.Div(g.Text(r.Name))),
				h.Td(h.Data("label", "Minutes"), h.Class("num"), h.Div(g.Text(strconv.Itoa(r.DurationMinutes)))),
				h.Td(h.Data("label", "Price"), h.Class("num"), h.Div(g.Text(r.Price))),
				h.Td(h.Data("label", "Who"), h.Div(g.Text(r.Who))),
				h.Td(h.Data("label", "Status"), h.Div(h.Span(h.Class(class), g.Text(status)))),
				h.Td(h.Data("label", ""), h.Class("actions"), h.Div(
					h.A(h.Class("btn"), h.Href(ServicesPath+"/"+r.ID.String()), g.Text("Edit"),
						h.Span(h.Class("vh"), g.Text(" "+r.Name))))),
			)
		})),
	)
}

func (v serviceView) content(csrf string) g.Node {
	return g.Group{
		h.P(h.A(h.Href(ServicesPath), g.Text("← Services"))),
		h.H1(g.Text(cmpOr(v.Form.Name, "Service"))),
		h.Section(h.Class("card narrow"), h.Aria("labelledby", "edit-h"),
			h.H2(h.ID("edit-h"), g.Text("Details")),
			v.Form.summary(),
			h.Form(h.Method("post"), h.Action(ServicesPath+"/"+v.ID.String()), novalidate(),
				csrfInput(csrf),
				v.Form.fields(v.Currency, v.People),
				h.Div(h.Class("field"), h.P(h.Class("inline-check"),
					h.Input(h.ID("service-active"), h.Name("active"), h.Type("checkbox"), h.Value("yes"), g.If(v.Form.Active, h.Checked())),
					h.Label(h.For("service-active"), g.Text("Active (offered to customers)")),
				)),
				h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Save")),
			),
		),
	}
}

// serviceInputs are the ids of the service form's inputs, by the API's field names, in
// the order of the page.
var serviceInputs = []struct{ field, id string }{
	{"name", "service-name"}, {"duration_minutes", "service-duration"}, {"price_cents", "service-price"}, {"staff_ids", "service-staff"},
}

// summary lists the form's problems above it, each linking to its input.
func (f serviceForm) summary() g.Node {
	if len(f.Errors) == 0 {
		return nil
	}
	var items []g.Node
	for _, in := range serviceInputs {
		if msg := f.Errors[in.field]; msg != "" {
			items = append(items, h.Li(h.A(h.Href("#"+in.id), g.Text(msg))))
		}
	}
	return h.Div(h.Class("error-summary"), h.Role("alert"), h.Aria("labelledby", "error-summary-h"), h.TabIndex("-1"),
		h.H3(h.ID("error-summary-h"), g.Text("Check the service")), h.Ul(items...))
}

// fields are the service's inputs: name, length, price, and who does it.
func (f serviceForm) fields(currency string, people []catalog.Staff) g.Node {
	staffErr := f.Errors["staff_ids"]
	return g.Group{
		inputField("service-name", "Name", f.Errors["name"], h.Name("name"), h.Type("text"), h.MaxLength("100"),
			h.Value(f.Name), h.Placeholder("Cut"), h.Required()),
		inputField("service-duration", "Length in minutes (5 to 480)", f.Errors["duration_minutes"], h.Name("duration_minutes"),
			h.Type("number"), inputMode("numeric"), h.Min(strconv.Itoa(catalog.MinDuration)), h.Max(strconv.Itoa(catalog.MaxDuration)),
			h.Step("1"), h.Value(f.Duration), h.Class("short"), h.Required()),
		h.Div(fieldClass(f.Errors["price_cents"]),
			h.Label(h.For("service-price"), g.Text("Price "), h.Span(h.Class("muted"), g.Text("in "+currency))),
			fieldError("service-price-error", f.Errors["price_cents"]),
			h.Input(h.ID("service-price"), h.Name("price"), h.Type("text"), inputMode("decimal"), h.Value(f.Price),
				h.Placeholder("30.00"), h.Class("short"), h.Required(), invalid(f.Errors["price_cents"], "service-price-error")),
		),
		g.If(len(people) > 0, h.FieldSet(fieldClass(staffErr), h.ID("service-staff"),
			h.Legend(g.Text("Who does it")),
			h.P(h.Class("hint"), g.Text("None ticked: anyone.")),
			fieldError("service-staff-error", staffErr),
			g.Map(people, func(p catalog.Staff) g.Node {
				id := "service-staff-" + p.ID.String()
				label := p.Name
				if !p.Active {
					label += " (inactive)"
				}
				return h.P(h.Class("inline-check"),
					h.Input(h.ID(id), h.Name("staff_id"), h.Type("checkbox"), h.Value(p.ID.String()),
						g.If(slices.Contains(f.StaffIDs, p.ID.String()), h.Checked())),
					h.Label(h.For(id), g.Text(label)),
				)
			}),
		)),
	}
}
