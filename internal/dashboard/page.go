package dashboard

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Pages are built as Go values with gomponents rather than executed templates: a
// template's executor looks methods up by name at run time (reflect's MethodByName),
// and while it is reachable the linker keeps every exported method of every type in the
// server binary, about a third of its size. gomponents escapes every g.Text and every
// attribute value; g.Raw is never used, and hrefs are built only from constants, ids,
// page numbers and queries we encoded.

// view is a page's data; it draws what the layout frames.
type view interface {
	// content is the page inside <main>. csrf is the signed-in session's token for the
	// page's forms ("" when signed out).
	content(csrf string) g.Node
}

// layout is what every page's frame needs.
type layout struct {
	Title   string
	CSS     string
	JS      string
	Icon    string
	Refresh int
	// RefreshURL is what the page's script fetches to refresh its live parts: the
	// dashboard page's own GET address, never the URL in the address bar, which after
	// a form's answer is the form's POST-only action (a GET there is a 404). Empty on
	// pages without live parts.
	RefreshURL string
	Nav        string // which top link is current
	// Book shows the Book page's link; Stats the figures' page's.
	Book  bool
	Stats bool
	// Inbox shows the inbox's link, Unread its badge (open conversations unread).
	Inbox  bool
	Unread int
	Shop   *shops.Shop
	CSRF   string
	View   view
}

func (d *Dashboard) render(c echo.Context, status int, title string, v view) error {
	var buf bytes.Buffer
	if err := d.layoutOf(c, title, v).html().Render(&buf); err != nil {
		d.logger(c).Error("dashboard render", "err", err, "path", c.Request().URL.Path)
		return c.String(http.StatusInternalServerError, "internal error")
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// layoutOf frames v, titled title, for the request c: signed in or not, and which top
// link is current.
func (d *Dashboard) layoutOf(c echo.Context, title string, v view) layout {
	l := layout{
		Title: title, CSS: "/dashboard/static/dashboard.css?v=" + d.version,
		JS: "/dashboard/static/refresh.js?v=" + d.version, Icon: "/dashboard/static/icon.svg?v=" + d.version,
		Refresh: int(d.cfg.RefreshEvery / time.Second), View: v,
	}
	if s, ok := c.Get(ctxSession).(*signedIn); ok {
		l.Shop, l.CSRF = &s.Shop, s.CSRF
		l.Inbox, l.Unread = d.cfg.Inbox != nil, d.unread(c, s)
		l.Book = d.cfg.Book != nil
		l.Stats = d.cfg.Stats != nil
	}
	switch v := v.(type) {
	case recordView:
		l.Nav = "home"
	case statsView:
		l.Nav = "stats"
	case homeView:
		l.Nav, l.RefreshURL = "home", "/dashboard"
		if v.Page > 1 {
			l.RefreshURL += "?page=" + strconv.Itoa(v.Page)
		}
	case bookView:
		l.Nav = "book"
	case customersView, customerView, importView:
		l.Nav = "customers"
	case staffView:
		l.Nav = "staff"
	case servicesView, serviceView:
		l.Nav = "services"
	case settingsView, newKeyView:
		l.Nav = "settings"
	case integrationsView, newSecretView, newConnectorView:
		l.Nav = "integrations"
	case inboxView, threadView:
		l.Nav = "inbox"
	}
	return l
}

// html is the whole page. The script is loaded only for a signed-in owner, and told
// what to refresh only on a page with live parts.
func (l layout) html() g.Node {
	return h.Doctype(h.HTML(h.Lang("en"),
		h.Head(
			h.Meta(h.Charset("utf-8")),
			h.Meta(h.Name("viewport"), h.Content("width=device-width, initial-scale=1")),
			h.Meta(h.Name("color-scheme"), h.Content("light")),
			h.TitleEl(g.Text(l.Title)),
			h.Link(h.Rel("stylesheet"), h.Href(l.CSS)),
			h.Link(h.Rel("icon"), h.Href(l.Icon), h.Type("image/svg+xml")),
			g.If(l.Shop != nil, h.Script(h.Src(l.JS), h.Defer())),
		),
		h.Body(
			g.If(l.Shop != nil && l.RefreshURL != "", g.Group{
				h.Data("refresh-seconds", strconv.Itoa(l.Refresh)), h.Data("refresh-url", l.RefreshURL),
			}),
			h.A(h.Class("skip"), h.Href("#main"), g.Text("Skip to content")),
			l.header(),
			h.Main(h.ID("main"), h.Class("wrap"), l.View.content(l.CSRF)),
		),
	))
}

// header is the top bar: the brand, and for a signed-in owner the shop, the page links
// and the sign-out button.
func (l layout) header() g.Node {
	return h.Header(h.Class("top"),
		h.Div(h.Class("wrap top-inner"),
			h.P(h.Class("brand"),
				h.Img(h.Src(l.Icon), h.Alt(""), h.Width("24"), h.Height("24")), g.Text(" "),
				h.Span(h.Class("brand-text"), g.Text("Slot recovery")),
			),
			g.Iff(l.Shop != nil, func() g.Node {
				return g.Group{
					h.P(h.Class("shop-name"), g.Text(l.Shop.Name)),
					h.Nav(h.Class("nav"), h.Aria("label", "Dashboard"),
						l.navLink("home", "/dashboard", "Slots"),
						g.If(l.Book, l.navLink("book", BookPath, "Book")),
						g.If(l.Inbox, l.inboxLink()),
						l.navLink("customers", "/dashboard/customers", "Customers"),
						g.If(l.Stats, l.navLink("stats", StatsPath, "Figures")),
						l.navLink("staff", StaffPath, "Staff"),
						l.navLink("services", ServicesPath, "Services"),
						l.navLink("integrations", IntegrationsPath, "Integrations"),
						l.navLink("settings", "/dashboard/settings", "Settings"),
					),
					h.Form(h.Method("post"), h.Action("/dashboard/logout"), h.Class("signout"),
						csrfInput(l.CSRF),
						h.Button(h.Type("submit"), h.Class("btn btn-quiet"), g.Text("Sign out")),
					),
				}
			}),
		),
	)
}

// inboxLink is the inbox's top link, with how many open conversations wait unread.
func (l layout) inboxLink() g.Node {
	return h.A(h.Href(InboxPath), h.ID("nav-inbox"), g.If(l.Nav == "inbox", h.Aria("current", "page")), g.Text("Inbox"),
		g.If(l.Unread > 0, g.Group{g.Text(" "), h.Span(h.Class("nav-badge"), h.ID("nav-unread"), g.Text(strconv.Itoa(l.Unread)),
			h.Span(h.Class("vh"), g.Text(" unread")))}))
}

// navLink is a top link, marked current when it is the page's.
func (l layout) navLink(nav, href, text string) g.Node {
	return h.A(h.Href(href), g.If(l.Nav == nav, h.Aria("current", "page")), g.Text(text))
}

func (v loginView) content(string) g.Node {
	return h.Div(h.Class("narrow"),
		h.H1(g.Text("Sign in")),
		h.P(h.Class("lede"), g.Text("Sign in with the API key your shop received when it was set up.")),
		h.Form(h.Method("post"), h.Action("/dashboard/login"), h.Class("card"), novalidate(),
			csrfInput(v.CSRF),
			h.Div(fieldClass(v.Error),
				h.Label(h.For("api_key"), g.Text("Shop API key")),
				h.P(h.Class("hint"), h.ID("api_key-hint"),
					g.Text("It starts with "), h.Code(g.Text("shop_")), g.Text(".")),
				fieldError("api_key-error", v.Error),
				h.Input(h.ID("api_key"), h.Name("api_key"), h.Type("password"), h.AutoComplete("current-password"),
					g.Attr("spellcheck", "false"), h.Required(),
					g.If(v.Error != "", h.Aria("invalid", "true")),
					h.Aria("describedby", describedBy("api_key-hint", v.Error, "api_key-error"))),
			),
			h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Sign in")),
		),
	)
}

func (v errorView) content(string) g.Node {
	return h.Div(h.Class("narrow"),
		h.H1(g.Text(v.Heading)),
		h.P(h.Class("lede"), g.Text(v.Message)),
		h.P(h.A(h.Href("/dashboard"), g.Text("Back to the dashboard"))),
		h.P(h.Class("muted"), g.Text("Error "+strconv.Itoa(v.Status))),
	)
}

// csrfInput is the hidden field that carries a form's CSRF token.
func csrfInput(token string) g.Node {
	return h.Input(h.Type("hidden"), h.Name("csrf"), h.Value(token))
}

// novalidate leaves checking a form to the server, whose messages say more than the
// browser's.
func novalidate() g.Node { return g.Attr("novalidate") }

// inputMode is the keyboard a phone shows for an input.
func inputMode(mode string) g.Node { return g.Attr("inputmode", mode) }

// fieldClass is the class of a form field's box, marked when msg says what is wrong
// with it.
func fieldClass(msg string) g.Node {
	if msg != "" {
		return h.Class("field has-error")
	}
	return h.Class("field")
}

// fieldError is the message that says what is wrong with a field, under its label; id
// lets the input point at it. Nothing when msg is empty.
func fieldError(id, msg string) g.Node {
	if msg == "" {
		return nil
	}
	return h.P(h.Class("field-error"), h.ID(id), h.Span(h.Class("vh"), g.Text("Error: ")), g.Text(msg))
}

// inputField is a labelled input whose id is id, with msg, when set, under its label:
// attrs are the input's attributes after its id.
func inputField(id, label, msg string, attrs ...g.Node) g.Node {
	return h.Div(fieldClass(msg),
		h.Label(h.For(id), g.Text(label)),
		fieldError(id+"-error", msg),
		h.Input(h.ID(id), g.Group(attrs), invalid(msg, id+"-error")),
	)
}

// invalid marks an input wrong and points it at its message, the element errorID,
// when msg is set.
func invalid(msg, errorID string) g.Node {
	if msg == "" {
		return nil
	}
	return g.Group{h.Aria("invalid", "true"), h.Aria("describedby", errorID)}
}

// describedBy is an input's aria-describedby for a field with a hint: the hint, then
// the error message when msg is set.
func describedBy(hintID, msg, errorID string) string {
	if msg != "" {
		return hintID + " " + errorID
	}
	return hintID
}

// plural is "s" for more than one.
func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}
