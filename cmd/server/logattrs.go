package main

import (
	"log/slog"
	"time"
)

func slogStr(k, v string) slog.Attr               { return slog.String(k, v) }
func slogInt(k string, v int) slog.Attr           { return slog.Int(k, v) }
func slogDur(k string, v time.Duration) slog.Attr { return slog.Duration(k, v) }

func levelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	default:
		return slog.LevelInfo
	}
}
