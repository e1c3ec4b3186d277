package dashboard

import (
	"strconv"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The customers pages: the list with its import form, a customer's form, and the
// import's report.

func (v customersView) content(csrf string) g.Node {
	return g.Group{
		h.H1(g.Text("Your customers")),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		h.P(h.Class("lede"), g.Text("Offers go to customers who opted in, waitlist priority first, when an opening suits "+
			"their preferences. Someone who replied STOP is shown as opted out: only their own START opts them back in.")),
		importCard(csrf),
		v.exportCard(csrf),
		h.Section(h.Class("card"), h.Aria("labelledby", "list-h"),
			h.H2(h.ID("list-h"), g.Text("Customers")),
			v.filters(),
			v.list(),
			// Next is this page's own path with an encoded query (see customers): an href
			// of ours, not one the request chose.
			g.If(v.Next != "", h.Nav(h.Class("pager"), h.Aria("label", "Customer pages"),
				h.A(h.Href(v.Next), h.Rel("next"), g.Text("Next page →")))),
		),
	}
}

// importCard is the CSV upload form. Its csrf field comes before the file: the handler
// checks the token before it reads the file.
func importCard(csrf string) g.Node {
	return h.Section(h.Class("card"), h.Aria("labelledby", "import-h"),
		h.H2(h.ID("import-h"), g.Text("Import a list")),
		h.P(h.Class("muted"),
			g.Text("A CSV file with a header line: "), h.Code(g.Text("phone")),
			g.Text(" (required, +15555550123 form), "), h.Code(g.Text("name")),
			g.Text(", "), h.Code(g.Text("priority")),
			g.Text(", "), h.Code(g.Text("sms_opt_in")),
			g.Text(" (yes or no), "), h.Code(g.Text("preferences")),
			g.Text(" (for example "), h.Code(g.Text("days=mon,tue; times=09:00-12:00; services=Haircut; staff=Ana")),
			g.Text("), "), h.Code(g.Text("language")),
			g.Text(" (en, es or fr; empty: the shop's, or unchanged). Up to 10,000 lines. Importing the same file again updates, never duplicates. "+
				"Nobody is opted in without a yes in the file."),
		),
		h.Form(h.Method("post"), h.Action(ImportPath), h.EncType("multipart/form-data"), h.Class("row export"),
			csrfInput(csrf),
			h.Div(
				h.Label(h.For("import-file"), g.Text("CSV file")),
				h.Input(h.ID("import-file"), h.Name("file"), h.Type("file"), h.Accept(".csv,text/csv"), h.Required()),
			),
			h.Div(h.Class("end"), h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Import"))),
		),
	)
}

// exportCard is the export form (the list with whole phones: the owner confirms with
// the shop's API key) and the record of the newest exports.
func (v customersView) exportCard(csrf string) g.Node {
	return h.Section(h.Class("card"), h.Aria("labelledby", "export-h"),
		h.H2(h.ID("export-h"), g.Text("Download your customers")),
		h.P(h.Class("muted"), g.Text("A CSV file in the import's columns, with whole phone numbers: keep it safe. "+
			"Enter your shop's API key to confirm; every download is listed below.")),
		h.Form(h.ID("customers-export"), h.Method("post"), h.Action(CustomersExportPath), h.Class("row export"),
			csrfInput(csrf),
			h.Div(
				h.Label(h.For("export-key"), g.Text("API key")),
				h.Input(h.ID("export-key"), h.Name("api_key"), h.Type("password"), h.AutoComplete("off"), h.Required()),
			),
			h.Div(h.Class("end"), h.Button(h.Type("submit"), h.Class("btn"), g.Text("Download CSV"))),
		),
		g.If(len(v.Exports) == 0, h.P(h.Class("muted"), g.Text("No downloads yet."))),
		g.If(len(v.Exports) > 0, h.Table(h.ID("exports"),
			h.THead(h.Tr(h.Th(g.Text("When")), h.Th(g.Text("Customers")), h.Th(g.Text("Browser")))),
			h.TBody(g.Map(v.Exports, func(x customers.Export) g.Node {
				count := "not finished"
				if x.Customers >= 0 {
					count = strconv.Itoa(x.Customers)
				}
				return h.Tr(h.Td(g.Text(x.At.In(v.Location).Format("Mon 2 Jan 2006 15:04 MST"))), h.Td(g.Text(count)),
					h.Td(g.Text(cmpOr(x.UserAgent, "unknown"))))
			})),
		)),
	)
}

// filters is the search form above the list.
func (v customersView) filters() g.Node {
	return h.Form(h.Method("get"), h.Action("/dashboard/customers"), h.Class("row filters"),
		h.Div(
			h.Label(h.For("q"), g.Text("Name or phone")),
			h.Input(h.ID("q"), h.Name("q"), h.Type("search"), h.MaxLength("100"), h.Value(v.Query)),
		),
		h.Div(
			h.Label(h.For("status"), g.Text("Show")),
			h.Select(h.ID("status"), h.Name("status"), g.Map(v.Statuses, func(o option) g.Node {
				return h.Option(h.Value(o.Value), g.If(o.Selected, h.Selected()), g.Text(o.Label))
			})),
		),
		h.Div(h.Class("end"), h.Button(h.Type("submit"), h.Class("btn"), g.Text("Search"))),
	)
}

func (v customersView) list() g.Node {
	if len(v.Rows) == 0 {
		if v.Query != "" || v.Status != "" {
			return h.P(h.Class("empty"), g.Text("No customer matches."))
		}
		return h.P(h.Class("empty"), g.Text("No customers yet. Import a list above, or add them through the API."))
	}
	return h.Table(h.Class("list"), h.ID("customer-list"),
		h.THead(h.Tr(colHead("Name"), colHead("Phone"), colHead("Texts"), numHead("Priority"), colHead("Wants"),
			colHead("Language"), actionsHead())),
		h.TBody(g.Map(v.Rows, customerRow.row)),
	)
}

// statusBadge is a customer's texting status: green when offers reach them, red after
// STOP, grey when they are not opted in or their number cannot take texts.
func statusBadge(status, label string) g.Node {
	class := "badge badge-muted"
	switch status {
	case customers.StatusOptedIn:
		class = "badge badge-ok"
	case customers.StatusOptedOut:
		class = "badge badge-bad"
	}
	return h.Span(h.Class(class), g.Text(label))
}

func (r customerRow) row() g.Node {
	return h.Tr(h.Class("customer-row"), h.Data("customer", r.ID.String()),
		h.Td(h.Data("label", "Name"), h.Div(g.Text(r.Name))),
		h.Td(h.Data("label", "Phone"), h.Div(h.Class("phone"), g.Text(r.Phone))),
		h.Td(h.Data("label", "Texts"), h.Div(statusBadge(r.Status, r.StatusLabel),
			g.If(r.Reassigned, h.Span(h.Class("badge badge-wait reassigned"), g.Text("Number may have changed hands"))))),
		h.Td(h.Data("label", "Priority"), h.Class("num"), h.Div(g.Text(strconv.Itoa(r.Priority)))),
		h.Td(h.Data("label", "Wants"), h.Div(h.Class("muted"), g.Text(r.Preferences))),
		h.Td(h.Data("label", "Language"), h.Div(h.Class(r.languageClass()),
			g.Text(r.Language))),
		h.Td(h.Data("label", ""), h.Class("actions"), h.Div(
			h.A(h.Class("btn"), h.Href("/dashboard/customers/"+r.ID.String()), g.Text("Edit"),
				h.Span(h.Class("vh"), g.Text(" "+r.Name))))),
	)
}

// languageClass greys the shop's language: the customer has none of their own.
func (r customerRow) languageClass() string {
	if r.ShopsLanguage {
		return "language muted"
	}
	return "language"
}

func (v customerView) content(csrf string) g.Node {
	name := v.Form.Name
	if name == "" {
		name = "Customer"
	}
	return g.Group{
		h.P(h.A(h.Href("/dashboard/customers"), g.Text("← Customers"))),
		h.H1(g.Text(name+" "), h.Span(h.Class("muted phone"), g.Text(v.Phone))),
		h.P(h.ID("customer-status"), g.Text("Texts: "), statusBadge(v.Status, v.StatusLabel),
			g.If(v.PausedUntil != "", h.Span(h.Class("badge badge-wait"), g.Text("Paused offers until "+v.PausedUntil)))),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), g.Text(v.Notice))),
		g.If(v.ReassignedAt != "", v.reassignedNotice(csrf)),
		h.Div(h.Class("split"),
			h.Section(h.Class("card"), h.Aria("labelledby", "edit-h"),
				h.H2(h.ID("edit-h"), g.Text("Details")),
				h.Form(h.Method("post"), h.Action("/dashboard/customers/"+v.ID.String()), novalidate(),
					csrfInput(csrf),
					v.Form.nameField(),
					v.Form.priorityField(),
					v.Form.preferencesField(v.Staff),
					v.languageField(),
					v.optInField(),
					v.moveUpField(),
					h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Save")),
				),
			),
			h.Section(h.Class("card"), h.Aria("labelledby", "erase-h"),
				h.H2(h.ID("erase-h"), g.Text("Erase this customer")),
				h.P(g.Text("Their name and phone are deleted and they are never texted again. "+
					"Slots they booked stay in your totals, without their name.")),
				h.Form(h.Method("post"), h.Action("/dashboard/customers/"+v.ID.String()+"/erase"),
					csrfInput(csrf),
					h.Button(h.Type("submit"), h.Class("btn btn-danger"), g.Text("Erase customer")),
				),
			),
		),
		v.Record.node(v.ID.String(), csrf),
	}
}

// reassignedNotice says the number answered "wrong number" and may belong to someone
// else now, with the button that clears it once the owner has checked.
func (v customerView) reassignedNotice(csrf string) g.Node {
	return h.Div(h.Class("notice"), h.ID("customer-reassigned"), h.Role("status"),
		h.P(g.Text("On "+v.ReassignedAt+" this number answered “wrong number”: it may belong to someone else now, "+
			"and it is opted out. Check with the customer, and update their number if it changed.")),
		h.Form(h.Method("post"), h.Action("/dashboard/customers/"+v.ID.String()+"/reassigned_checked"),
			csrfInput(csrf),
			h.Button(h.Type("submit"), h.Class("btn"), g.Text("Checked: the number is still theirs")),
		),
	)
}

func (f customerForm) nameField() g.Node {
	e := f.Errors["name"]
	return inputField("name", "Name", e, h.Name("name"), h.Type("text"), h.MaxLength("200"), h.Value(f.Name))
}

func (f customerForm) priorityField() g.Node {
	e := f.Errors["priority"]
	return h.Div(fieldClass(e),
		h.Label(h.For("priority"), g.Text("Priority")),
		h.P(h.Class("hint"), h.ID("priority-hint"), g.Text("Higher is offered first (your waitlist).")),
		fieldError("priority-error", e),
		h.Input(h.ID("priority"), h.Name("priority"), h.Type("number"), inputMode("numeric"),
			h.Min("-1000"), h.Max("1000"), h.Step("1"), h.Class("short"), h.Value(f.Priority),
			h.Aria("describedby", describedBy("priority-hint", e, "priority-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// preferencesField is the customer's preferences in one line; staff are the shop's
// people, whom a staff= part names.
func (f customerForm) preferencesField(staff []string) g.Node {
	e := f.Errors["preferences"]
	return h.Div(fieldClass(e),
		h.Label(h.For("preferences"), g.Text("Preferences")),
		h.P(h.Class("hint"), h.ID("preferences-hint"),
			g.Text("In your time zone, for example "),
			h.Code(g.Text("days=mon,sat; times=09:00-12:00,17:00-19:00; services=Haircut")),
			g.Text(". Empty: any opening."),
			g.If(len(staff) > 0, g.Group{
				g.Text(" Only some of your people: "), h.Code(g.Text("staff=" + strings.Join(staff, ","))),
				g.Text(" (yours: " + strings.Join(staff, ", ") + ")."),
			})),
		fieldError("preferences-error", e),
		h.Input(h.ID("preferences"), h.Name("preferences"), h.Type("text"), h.MaxLength("500"), h.Value(f.Preferences),
			h.Aria("describedby", describedBy("preferences-hint", e, "preferences-error")),
			g.If(e != "", h.Aria("invalid", "true"))),
	)
}

// languageField is the customer's own language, or the shop's (the first choice, which
// names it): what their offers and answers are texted in.
func (v customerView) languageField() g.Node {
	e := v.Form.Errors[shops.LanguageField]
	return h.Div(fieldClass(e),
		h.Label(h.For("language"), g.Text("Language of their texts")),
		h.P(h.Class("hint"), h.ID("language-hint"), g.Text("The shop's follows your settings if you change it there.")),
		fieldError("language-error", e),
		h.Select(h.ID("language"), h.Name(shops.LanguageField),
			h.Aria("describedby", describedBy("language-hint", e, "language-error")),
			g.If(e != "", h.Aria("invalid", "true")),
			g.Map(languageOptions(language.Code(v.Form.Language), shopsLanguage(v.ShopLanguage)), func(o option) g.Node {
				return h.Option(h.Value(o.Value), g.If(o.Selected, h.Selected()), g.Text(o.Label))
			}),
		),
	)
}

// moveUpField asks whether the customer, when booked, is offered an earlier time that
// frees up (a move-up: their booking moves only if they reply YES). The hidden input
// tells a form that showed the box from one that did not.
func (v customerView) moveUpField() g.Node {
	return h.Div(h.Class("field"),
		h.Input(h.Type("hidden"), h.Name("move_up_shown"), h.Value("1")),
		h.P(h.Class("inline-check"),
			h.Input(h.ID("move_up"), h.Name("move_up"), h.Type("checkbox"), h.Value("yes"), g.If(v.Form.MoveUp, h.Checked()),
				h.Aria("describedby", "move_up-hint")),
			h.Label(h.For("move_up"), g.Text("Offer earlier times")),
		),
		h.P(h.Class("hint"), h.ID("move_up-hint"),
			g.Text("When a time earlier than their booking frees up, they are texted first; their booking moves only if they reply YES.")),
	)
}

// optInField is the consent box. For a customer who replied STOP it is disabled, with
// why: only their own START opts them back in.
func (v customerView) optInField() g.Node {
	return h.Div(h.Class("field"),
		h.P(h.Class("inline-check"),
			h.Input(h.ID("sms_opt_in"), h.Name("sms_opt_in"), h.Type("checkbox"), h.Value("yes"),
				g.If(v.Form.OptIn, h.Checked()),
				g.If(v.OptedOut, g.Group{h.Disabled(), h.Aria("describedby", "optout-note")})),
			h.Label(h.For("sms_opt_in"), g.Text("Agreed to receive offers by text")),
		),
		g.If(v.OptedOut, h.P(h.Class("alert"), h.ID("optout-note"),
			g.Text("This customer replied STOP and is opted out. The law leaves that choice to them: "+
				"only their own START, texted to your number, opts them back in. You cannot do it here."))),
	)
}

func (v importView) content(string) g.Node {
	return g.Group{
		h.P(h.A(h.Href("/dashboard/customers"), g.Text("← Customers"))),
		h.H1(g.Text("Import")),
		v.result(),
		h.P(h.A(h.Class("btn"), h.Href("/dashboard/customers"), g.Text("See the customers"))),
	}
}

// result is why nothing was imported, or the report: counts, then the lines refused.
func (v importView) result() g.Node {
	if v.Error != "" {
		return h.P(h.Class("alert"), h.Role("alert"), h.ID("import-error"), g.Text(v.Error+" Nothing was imported."))
	}
	count := func(n int, what string) g.Node {
		return h.Li(h.Strong(g.Text(strconv.Itoa(n))), g.Text(" "+what))
	}
	return h.Section(h.Class("card"), h.Aria("labelledby", "report-h"),
		h.H2(h.ID("report-h"), g.Text("The file is in"),
			g.If(v.Took != "", g.Group{g.Text(" "), h.Span(h.Class("muted"), g.Text("("+v.Took+")"))})),
		h.Ul(h.Class("report"), h.ID("import-report"),
			count(v.Created, "new"), count(v.Updated, "updated"), count(v.Unchanged, "unchanged"), count(v.Rejected, "not imported"),
		),
		g.If(len(v.Problems) > 0, g.Group{
			h.H3(g.Text("Lines not imported")),
			h.Table(h.Class("list"),
				h.THead(h.Tr(numHead("Line"), colHead("Phone"), colHead("Why"))),
				h.TBody(g.Map(v.Problems, func(r customers.ImportRow) g.Node {
					return h.Tr(
						h.Td(h.Class("num"), h.Data("label", "Line"), h.Div(g.Text(strconv.Itoa(r.Line)))),
						h.Td(h.Data("label", "Phone"), h.Div(h.Class("phone"), g.Text(r.Phone))),
						h.Td(h.Data("label", "Why"), h.Div(g.Text(r.Reason))),
					)
				})),
			),
			g.If(v.MoreProblems != 0, h.P(h.Class("muted"), g.Text("And "+strconv.Itoa(v.MoreProblems)+" more."))),
		}),
	)
}
