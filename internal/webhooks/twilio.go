// Package webhooks holds the HTTP handlers Twilio and Stripe call. They are thin: verify
// the signature before reading anything, decode, make one domain call, answer.
package webhooks

import (
	"bytes"
	"context"
	"encoding/xml"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// TwilioPath is where Twilio posts inbound texts.
const TwilioPath = "/webhooks/twilio/sms"

// OutcomeHeader carries the reply's outcome (DESIGN §6).
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
	Logger    *slog.Logger
	Metrics   *metrics.Metrics
}

// Handle answers one inbound text with TwiML and the X-Slot-Outcome header.
func (h *Twilio) Handle(c echo.Context) error {
	start := time.Now()
	req := c.Request()
	ctx := req.Context()
	if err := req.ParseForm(); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "malformed form body")
	}
	if h.Validator != nil {
		url := h.PublicURL + req.URL.RequestURI()
		if !h.Validator.Valid(url, req.PostForm, req.Header.Get("X-Twilio-Signature")) {
			h.Logger.WarnContext(ctx, "twilio signature rejected")
			return c.JSON(http.StatusForbidden, map[string]any{"error": map[string]string{
				"code": "bad_signature", "message": "X-Twilio-Signature is missing or wrong"}})
		}
	}
	in := inbound.Message{
		MessageSID: req.PostForm.Get("MessageSid"),
		From:       req.PostForm.Get("From"),
		To:         req.PostForm.Get("To"),
		Body:       req.PostForm.Get("Body"),
		OptOutType: req.PostForm.Get("OptOutType"),
	}
	if in.MessageSID == "" {
		in.MessageSID = req.PostForm.Get("SmsSid")
	}
	if in.MessageSID == "" || in.From == "" || in.To == "" || len(in.MessageSID) > 64 {
		return c.JSON(http.StatusBadRequest, map[string]any{"error": map[string]string{
			"code": "bad_request", "message": "MessageSid, From and To are required"}})
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
	h.Logger.InfoContext(ctx, "inbound text answered", "outcome", ans.Outcome, "replayed", ans.Replayed)
	c.Response().Header().Set(OutcomeHeader, string(ans.Outcome))
	if err := c.Blob(http.StatusOK, "text/xml; charset=utf-8", TwiML(ans.Message)); err != nil {
		return err
	}
	// A booked customer learns it from this answer only if it reaches Twilio in time;
	// otherwise the booking's notice job texts them.
	if ans.Outcome == inbound.OutcomeBooked && time.Since(start) < answerDeadline {
		if err := http.NewResponseController(c.Response()).Flush(); err != nil {
			h.Logger.WarnContext(ctx, "booked answer not written; the notice text will follow", "err", err)
			return nil
		}
		if err := h.Inbound.Delivered(context.WithoutCancel(ctx), ans); err != nil {
			h.Logger.WarnContext(ctx, "booked answer not recorded as delivered; the notice text will follow", "err", err)
		}
	}
	return nil
}

// answerDeadline is how long Twilio waits for a webhook's answer (15 s), less a margin.
const answerDeadline = 13 * time.Second

// TwiML renders a messaging response with one message, escaped.
func TwiML(message string) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<Response>")
	if message != "" {
		b.WriteString("<Message>")
		_ = xml.EscapeText(&b, []byte(message))
		b.WriteString("</Message>")
	}
	b.WriteString("</Response>")
	return b.Bytes()
}
