package dashboard

import (
	"net/url"
	"strconv"

	"github.com/google/uuid"
	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"
)

// The inbox pages: the conversations, and a thread with its reply form.

func (v inboxView) content(string) g.Node {
	return g.Group{
		h.H1(g.Text("Inbox")),
		h.P(h.Class("lede"), g.Text("Texts the server could not answer on its own wait here for you, "+
			"with everything your shop texted the number. Reply from your shop's number; close a conversation when it is settled.")),
		h.Section(h.Class("card"), h.Aria("labelledby", "inbox-h"),
			h.H2(h.ID("inbox-h"), g.Text("Conversations")),
			h.Nav(h.Class("filters tabs"), h.Aria("label", "Show"), g.Map(v.Filters, func(o option) g.Node {
				return h.A(h.Href(InboxPath+"?status="+o.Value), h.ID("filter-"+o.Value),
					g.If(o.Selected, h.Aria("current", "page")), g.Text(o.Label))
			})),
			v.list(),
			// Next is this page's own path with an encoded query: an href of ours.
			g.If(v.Next != "", h.Nav(h.Class("pager"), h.Aria("label", "Conversation pages"),
				h.A(h.Href(v.Next), h.Rel("next"), g.Text("Next page →")))),
		),
	}
}

func (v inboxView) list() g.Node {
	if len(v.Rows) == 0 {
		if v.Status == "open" {
			return h.P(h.Class("empty"), g.Text("Nothing waits for you."))
		}
		return h.P(h.Class("empty"), g.Text("No conversations here."))
	}
	return h.Table(h.Class("list"), h.ID("conversation-list"),
		h.THead(h.Tr(colHead("Who"), colHead("Last text"), colHead("When"), colHead("Status"), actionsHead())),
		h.TBody(g.Map(v.Rows, conversationRow.row)),
	)
}

func (r conversationRow) row() g.Node {
	last := g.Node(g.Text(r.Last))
	if r.LastOut {
		last = g.Group{h.Span(h.Class("muted"), g.Text("You: ")), g.Text(r.Last)}
	}
	return h.Tr(h.Class("conversation-row"), h.Data("conversation", r.ID.String()),
		h.Td(h.Data("label", "Who"), h.Div(g.If(r.Unread > 0, h.Strong(g.Text(r.Who))), g.If(r.Unread == 0, g.Text(r.Who)),
			g.Text(" "), h.Span(h.Class("muted phone"), g.Text(r.Phone)))),
		h.Td(h.Data("label", "Last text"), h.Div(last)),
		h.Td(h.Data("label", "When"), h.Div(h.Class("muted"), g.Text(r.When))),
		h.Td(h.Data("label", "Status"), h.Div(
			g.If(r.Unread > 0, h.Span(h.Class("badge badge-wait unread"), g.Text(strconv.Itoa(r.Unread)+" unread"))),
			g.If(r.Unread == 0, h.Span(h.Class("badge badge-muted"), g.Text(r.Status))))),
		h.Td(h.Data("label", ""), h.Class("actions"), h.Div(
			h.A(h.Class("btn"), h.Href(InboxPath+"/"+r.ID.String()), g.Text("Open"),
				h.Span(h.Class("vh"), g.Text(" the conversation with "+r.Who))))),
	)
}

func (v threadView) content(csrf string) g.Node {
	next, label := "closed", "Close conversation"
	if v.Status == "closed" {
		next, label = "open", "Reopen conversation"
	}
	e := v.Error
	return g.Group{
		h.P(h.A(h.Href(InboxPath), g.Text("← Inbox"))),
		h.H1(g.Text(v.Who+" "), h.Span(h.Class("muted phone"), g.Text(v.Phone))),
		g.If(v.Notice != "", h.P(h.Class("notice"), h.Role("status"), h.ID("thread-notice"), g.Text(v.Notice))),
		h.P(h.ID("thread-status"), g.Text("Status: "), h.Span(h.Class("badge badge-muted"), g.Text(v.Status)),
			g.If(v.Customer != uuid.Nil, g.Group{g.Text(" · "),
				h.A(h.Href("/dashboard/customers/"+v.Customer.String()), g.Text("Customer details"))})),
		h.Section(h.Class("card"), h.Aria("labelledby", "thread-h"),
			h.H2(h.ID("thread-h"), g.Text("Texts")),
			g.If(len(v.Messages) == 0, h.P(h.Class("empty"), g.Text("No texts kept."))),
			g.If(v.Older != "", h.P(h.A(h.ID("thread-older"), h.Href(InboxPath+"/"+v.ID.String()+"?before="+url.QueryEscape(v.Older)),
				g.Text("← Older texts")))),
			h.Ol(h.Class("thread"), h.ID("thread"), g.Map(v.Messages, threadMessage.item)),
			g.If(v.Paged, h.P(h.A(h.ID("thread-newest"), h.Href(InboxPath+"/"+v.ID.String()), g.Text("Newest texts →")))),
		),
		h.Section(h.Class("card"), h.Aria("labelledby", "reply-h"),
			h.H2(h.ID("reply-h"), g.Text("Reply")),
			h.Form(h.Method("post"), h.Action(InboxPath+"/"+v.ID.String()+"/reply"), novalidate(), h.ID("reply-form"),
				csrfInput(csrf),
				h.Div(fieldClass(e),
					h.Label(h.For("reply-body"), g.Text("Your text")),
					h.P(h.Class("hint"), h.ID("reply-hint"), g.Text("Up to 640 characters, sent from your shop's number.")),
					fieldError("reply-error", e),
					h.Textarea(h.ID("reply-body"), h.Name("body"), h.Rows("3"), h.MaxLength("640"),
						h.Aria("describedby", describedBy("reply-hint", e, "reply-error")),
						g.If(e != "", h.Aria("invalid", "true")), g.Text(v.Body)),
				),
				h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Send reply")),
			),
			h.Form(h.Method("post"), h.Action(InboxPath+"/"+v.ID.String()+"/status"), h.Class("row"), h.ID("status-form"),
				csrfInput(csrf),
				h.Input(h.Type("hidden"), h.Name("status"), h.Value(next)),
				h.Button(h.Type("submit"), h.Class("btn"), g.Text(label)),
			),
		),
	}
}

func (m threadMessage) item() g.Node {
	class := "msg msg-in"
	if m.Out {
		class = "msg msg-out"
	}
	return h.Li(h.Class(class),
		h.P(h.Class("msg-meta muted"), g.Text(m.Author+" · "+m.When), g.If(m.Status != "", g.Text(" · "+m.Status))),
		h.P(h.Class("msg-body"), g.Text(m.Body)),
	)
}
