// Package logging builds the server's JSON logger and carries a request id through a
// context, so every line logged while serving a request names it.
package logging

import (
	"context"
	"io"
	"log/slog"
)

type ctxKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// New returns a JSON logger at level ("debug", "info", "warn", "error") that adds the
// request id of the context to every record logged with one.
func New(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(requestIDHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// AtLeast returns l logging only records of level min and above, whatever l's own level:
// for a library whose routine records (River's producers report their counts every few
// seconds per queue, at info) would bury the server's own events at the default level.
func AtLeast(l *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(floorHandler{Handler: l.Handler(), min: min})
}

type floorHandler struct {
	slog.Handler
	min slog.Level
}

func (h floorHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min && h.Handler.Enabled(ctx, level)
}

func (h floorHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return floorHandler{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h floorHandler) WithGroup(name string) slog.Handler {
	return floorHandler{Handler: h.Handler.WithGroup(name), min: h.min}
}
