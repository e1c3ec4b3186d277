// Package webhooks holds the HTTP handlers Twilio and Stripe call. They are thin: verify
// the signature before reading anything, decode, make one domain call, answer.
package webhooks

import (
	"cmp"
	"context"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// TwilioPath is where Twilio posts inbound texts.
const TwilioPath = "/webhooks/twilio/sms"

// TwilioAnsweredPath is the action URL of the <Message> that carries an answer: Twilio
// requests it, signed like its other webhooks, once it has made the answer's message,
// with that message's MessageSid and MessageStatus. Its query names the text the answer
// was given to (for), the answer's outcome and, for a booking, the booking.
const TwilioAnsweredPath = "/webhooks/twilio/answered"

// TwilioStatusPath is where Twilio posts the delivery status of the texts we send: the
// StatusCallback of every message (PUBLIC_URL followed by this path).
const TwilioStatusPath = "/webhooks/twilio/status"

// SignatureHeader carries Twilio's signature of a webhook request.
const SignatureHeader = "X-Twilio-Signature"

// OutcomeHeader carries the reply's outcome, one of inbound's Outcome values (public contract).
const OutcomeHeader = "X-Slot-Outcome"

// Twilio handles inbound texts.
type Twilio struct {
	Inbound *inbound.Service
	// Validator checks X-Twilio-Signature; nil accepts unsigned requests, which the
	// server allows only in DEV_MODE without Twilio credentials.
	Validator *twilio.Validator
	// PublicURL is the external base URL Twilio signs against (not the Host header,
	// which a proxy may rewrite).
	PublicURL string
	// Overrides are Twilio's connection overrides ("rc=3&rp=all", without "#") put on
	// the answers' action URLs, so that Twilio retries a report that fails; "" for none.
	Overrides string
	Logger    *slog.Logger
	Metrics   *metrics.Metrics
}

// Handle answers one inbound text with TwiML and the X-Slot-Outcome header. The answer's
// <Message> has an action URL (ActionURL): Twilio's request to it says whether the
// answer was sent (TwilioAnswered). Nothing is written after the answer.
func (h *Twilio) Handle(c echo.Context) error {
	start := time.Now()
	req := c.Request()
	ctx := req.Context()
	_, f, err := verifyTwilio(c, h.Validator, h.PublicURL, h.Logger)
	if err != nil {
		return err
	}
	in := inbound.Message{
		MessageSID: f.get("MessageSid"),
		From:       f.get("From"),
		To:         f.get("To"),
		Body:       f.get("Body"),
		OptOutType: f.get("OptOutType"),
	}
	if in.MessageSID == "" {
		in.MessageSID = f.get("SmsSid")
	}
	if in.MessageSID == "" || in.From == "" || in.To == "" || len(in.MessageSID) > 64 {
		return httperr.BadRequest("bad_request", "MessageSid, From and To are required")
	}
	ans, err := h.Inbound.Reply(ctx, in)
	if err != nil {
		h.Logger.ErrorContext(ctx, "inbound text not fully handled", "outcome", ans.Outcome, "err", err)
	}
	if !ans.Replayed {
		h.Metrics.Reply(string(ans.Outcome))
		if ans.Keyword == inbound.KeywordYes {
			h.Metrics.YesAnswered(time.Since(start))
		}
	}
	// At debug: the request's line at info carries the outcome (X-Slot-Outcome).
	h.Logger.DebugContext(ctx, "inbound text answered", "outcome", ans.Outcome, "replayed", ans.Replayed)
	body := TwiMLAction(ans.Message, ActionURL(h.PublicURL, h.Overrides, in.MessageSID, ans))
	res := c.Response()
	res.Header().Set(OutcomeHeader, string(ans.Outcome))
	res.Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, "text/xml; charset=utf-8", body)
}

// ActionURL is the action URL of the <Message> carrying ans, the answer to the text
// sid: publicURL, TwilioAnsweredPath and a query naming the text, the outcome, for a
// booking the booking, and for an answer stored without its words (a late YES) the
// words (Twilio signs the URL it requests, query included, so the server can trust
// them), then "#" and the connection overrides, if any.
func ActionURL(publicURL, overrides, sid string, ans inbound.Answer) string {
	// The query as url.Values.Encode writes it (names in byte order), without building
	// the map: this runs once a reply.
	var b strings.Builder
	b.Grow(len(publicURL) + len(TwilioAnsweredPath) + 128 + len(overrides))
	b.WriteString(publicURL)
	b.WriteString(TwilioAnsweredPath)
	b.WriteByte('?')
	if ans.Outcome == inbound.OutcomeBooked && ans.BookingID != uuid.Nil {
		b.WriteString("booking=")
		b.WriteString(ans.BookingID.String())
		b.WriteByte('&')
	}
	b.WriteString("for=")
	b.WriteString(url.QueryEscape(sid))
	b.WriteString("&outcome=")
	b.WriteString(url.QueryEscape(string(ans.Outcome)))
	if ans.WordsLeft {
		b.WriteString("&words=") // stored without them: the mark stores them
		b.WriteString(url.QueryEscape(ans.Message))
	}
	if overrides != "" {
		b.WriteByte('#')
		b.WriteString(overrides)
	}
	return b.String()
}

// TwilioAnswered handles Twilio's requests to the answers' action URLs
// (TwilioAnsweredPath).
type TwilioAnswered struct {
	Inbound *inbound.Service
	// Validator checks X-Twilio-Signature; nil accepts unsigned requests, which the
	// server allows only in DEV_MODE without Twilio credentials.
	Validator *twilio.Validator
	// PublicURL is the external base URL the action URLs start with.
	PublicURL string
	Logger    *slog.Logger
}

// Handle verifies a report on an answer and records it (inbound.Service.MarkAnswerSent):
// the answer named by the signed URL was sent, unless MessageStatus says it failed. It
// answers an empty TwiML response (Twilio reads the action's answer as the rest of the
// messaging session: nothing more) once the mark is written, and 503 when it could not
// be, so that Twilio tries again (connection overrides on the action URL); a report
// never recorded leaves the answer to the sweeper, which texts it.
func (h *TwilioAnswered) Handle(c echo.Context) error {
	req := c.Request()
	ctx := req.Context()
	q, f, err := verifyTwilio(c, h.Validator, h.PublicURL, h.Logger)
	if err != nil {
		return err
	}
	t := inbound.AnswerReport{For: q.get("for"), Outcome: inbound.Outcome(q.get("outcome")), Words: q.get("words"),
		Status: cmp.Or(f.get("MessageStatus"), f.get("SmsStatus"))}
	if b := q.get("booking"); b != "" {
		id, err := uuid.Parse(b)
		if err != nil {
			return httperr.BadRequest("bad_request", "booking must be a booking id")
		}
		t.BookingID = id
	}
	if t.For == "" || t.Outcome == "" || t.Status == "" || len(t.For) > 64 {
		return httperr.BadRequest("bad_request", "for, outcome and MessageStatus are required")
	}
	if err := h.Inbound.MarkAnswerSent(ctx, t); err != nil {
		logger(h.Logger).WarnContext(ctx, "answer's report not recorded; twilio may try again", "outcome", t.Outcome, "err", err)
		return &httperr.Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "try again"}
	}
	body := TwiML("")
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, "text/xml; charset=utf-8", body)
}

// verifyTwilio checks the request's X-Twilio-Signature the same way for every Twilio
// route, and returns the decoded query and form (readForm). With a validator, a
// request without the header is refused before its body is read at all; one whose
// signature does not match PUBLIC_URL, the path and query, and the form is refused
// before any field is used. A nil validator accepts everything: the server allows that
// only in DEV_MODE without Twilio credentials.
func verifyTwilio(c echo.Context, v *twilio.Validator, publicURL string, log *slog.Logger) (query, body form, err error) {
	req := c.Request()
	sig := req.Header.Get(SignatureHeader)
	if v != nil && sig == "" {
		logger(log).WarnContext(req.Context(), "twilio signature missing", "route", c.Path())
		return nil, nil, errBadSignature()
	}
	if query, body, err = readForm(req); err != nil {
		return nil, nil, httperr.BadRequest("bad_request", "malformed form body")
	}
	if v != nil && !v.ValidFields(publicURL+req.URL.RequestURI(), body, sig) {
		logger(log).WarnContext(req.Context(), "twilio signature rejected", "route", c.Path())
		return nil, nil, errBadSignature()
	}
	return query, body, nil
}

func errBadSignature() error {
	return &httperr.Error{Status: http.StatusForbidden, Code: "bad_signature", Message: "X-Twilio-Signature is missing or wrong"}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// DeliveryRecorder takes the delivery reports of the texts we send. The domain
// implements it. Reports may come twice, out of order (delivered before sent), and
// before the send's message id has been stored: RecordDelivery must be idempotent and
// treat an unknown id as a normal outcome, not an error. An error is answered with a 5xx
// so that Twilio may try again.
type DeliveryRecorder interface {
	RecordDelivery(ctx context.Context, r sms.DeliveryReport) error
}

// TwilioStatus handles Twilio's message status callbacks (TwilioStatusPath).
type TwilioStatus struct {
	// Recorder takes each verified report; nil acknowledges reports and drops them
	// (logged at debug).
	Recorder DeliveryRecorder
	// Validator checks X-Twilio-Signature; nil accepts unsigned requests, which the
	// server allows only in DEV_MODE without Twilio credentials.
	Validator *twilio.Validator
	// PublicURL is the external base URL Twilio signs against, the same one the sender's
	// StatusCallback URL starts with.
	PublicURL string
	Logger    *slog.Logger
	Metrics   *metrics.Metrics
}

// Handle verifies and decodes one status callback, hands it to the recorder and answers
// 204. A bad signature is a 403 and a form that is not a status callback a 400, both
// with the {error:{code,message}} body; a recorder error is a 5xx.
func (h *TwilioStatus) Handle(c echo.Context) error {
	req := c.Request()
	ctx := req.Context()
	_, f, err := verifyTwilio(c, h.Validator, h.PublicURL, h.Logger)
	if err != nil {
		return err
	}
	rep, err := twilio.ParseStatusCallback(f.values())
	if err != nil {
		return httperr.BadRequest("bad_request", "MessageSid and MessageStatus are required, and ErrorCode must be a number")
	}
	log := logger(h.Logger)
	if h.Recorder == nil {
		log.DebugContext(ctx, "delivery report dropped: no recorder", "message_sid", rep.MessageID, "status", rep.Status)
	} else if err := h.Recorder.RecordDelivery(ctx, rep); err != nil {
		return fmt.Errorf("record delivery report for %s: %w", rep.MessageID, err)
	}
	h.Metrics.SMSDelivery(string(rep.Status), rep.Reason.String())
	if rep.Status.Failed() {
		if rep.Reason == sms.ReasonAccount {
			h.Metrics.SMSAccountError(metrics.StageDelivery, rep.ErrorCode)
		}
		log.InfoContext(ctx, "text not delivered", "message_sid", rep.MessageID, "status", rep.Status,
			"reason", rep.Reason.String(), "provider_code", rep.ErrorCode, "to", phone.Mask(rep.To))
	}
	return c.NoContent(http.StatusNoContent)
}

// TwiML renders a messaging response with one message, escaped.
func TwiML(message string) []byte { return TwiMLAction(message, "") }

// TwiMLAction renders a messaging response with one message, escaped, whose action URL
// is action ("" for none): Twilio requests it with the message's MessageSid and
// MessageStatus once it has made the message.
func TwiMLAction(message, action string) []byte {
	// One allocation, sized for the escaped text: this runs once a reply.
	b := make([]byte, 0, len(xml.Header)+len("<Response><Message action=\"\" method=\"POST\"></Message></Response>")+
		len(message)+len(action)+32)
	b = append(b, xml.Header...)
	b = append(b, "<Response>"...)
	if message != "" {
		b = append(b, "<Message"...)
		if action != "" {
			b = append(b, ` action="`...)
			b = appendEscaped(b, action)
			b = append(b, `" method="POST"`...)
		}
		b = append(b, '>')
		b = appendEscaped(b, message)
		b = append(b, "</Message>"...)
	}
	return append(b, "</Response>"...)
}

// appendEscaped appends s escaped as xml.EscapeText escapes it (the same bytes), without
// its []byte copy and io.Writer calls.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		i += width
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if !inXMLCharRange(r) || (r == utf8.RuneError && width == 1) {
				esc = "\uFFFD"
				break
			}
			continue
		}
		b = append(append(b, s[last:i-width]...), esc...)
		last = i
	}
	return append(b, s[last:]...)
}

// inXMLCharRange is encoding/xml's isInCharacterRange: XML 1.0's Char production.
func inXMLCharRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
