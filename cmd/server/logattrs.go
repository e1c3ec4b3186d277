package main

import (
	"log/slog"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

func slogStr(k, v string) slog.Attr               { return slog.String(k, v) }
func slogInt(k string, v int) slog.Attr           { return slog.Int(k, v) }
func slogDur(k string, v time.Duration) slog.Attr { return slog.Duration(k, v) }

// levelFor is the level of a request's log line: failures as warnings and errors,
// and at info every request a person or a program of the shop's made. Twilio's reports
// (that an answer was taken, a text's delivery status) come one or more per text and
// YES, and a line per report that went well tells an operator nothing: those are at
// debug.
func levelFor(path string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	case path == webhooks.TwilioAnsweredPath || path == webhooks.TwilioStatusPath:
		return slog.LevelDebug
	default:
		return slog.LevelInfo
	}
}
