package sms

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

// LogSender logs texts instead of sending them. It is for local development without
// Twilio credentials (DEV_MODE=1) and must not be wired up otherwise: unlike everything
// else in the server, it logs message bodies, on purpose, so a person trying the flow
// locally can read the offer and follow the payment link.
type LogSender struct {
	log *slog.Logger
}

// NewLogSender returns a LogSender that logs to l. A nil l discards the messages.
func NewLogSender(l *slog.Logger) *LogSender {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &LogSender{log: l}
}

// Text logs m with masked phone numbers and its body, and returns a random fake SID
// of Twilio's length that starts with "SMdev".
func (s *LogSender) Text(ctx context.Context, m Message) (string, error) {
	if err := m.Validate(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("log sms to %s: %w", phone.Mask(m.To), err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	sid := "SMdev" + hex.EncodeToString(b[:])[:29]

	attrs := []slog.Attr{
		slog.String("sid", sid),
		slog.String("from", phone.Mask(m.From)),
		slog.String("to", phone.Mask(m.To)),
		slog.String("body", m.Body),
		slog.Int("segments", Segments(m.Body)),
	}
	if m.ValidityPeriod > 0 {
		attrs = append(attrs, slog.Int("validity_seconds", ValiditySeconds(m.ValidityPeriod)))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "sms not sent (dev mode)", attrs...)
	return sid, nil
}
