package shopapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
)

// ---- Idempotency-Key ----

// idempotent honours the Idempotency-Key header (Stripe's convention) on a creating
// POST: the first request with a key runs and its answer is kept; a retry with the same
// key and the same request gets that answer again (status, body, Location) with
// Idempotent-Replayed: true, and runs nothing. A handler whose answer holds a secret
// shown once keeps another body for the retries (keepForReplay). It runs after requireShop: keys are the
// shop's. Without the header, or without a store, the request just runs.
func (h *Handlers) idempotent(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		key := req.Header.Get(idempotency.Header)
		if key == "" || h.Idempotency == nil {
			return next(c)
		}
		if !idempotency.ValidKey(key) {
			return httperr.BadRequestField("invalid_idempotency_key", idempotency.Header,
				"Idempotency-Key must be 1 to 255 printable ASCII characters, such as a UUID")
		}
		// The body is read whole to be compared with the first request's; the server's
		// body limit caps it (the import's own cap for the import).
		limit := int64(64 << 10)
		if req.URL.Path == ImportPath {
			limit = MaxImportBytes
		}
		body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, limit))
		if err != nil {
			if tooLarge(err) {
				if req.URL.Path == ImportPath {
					return &httperr.Error{Status: http.StatusRequestEntityTooLarge, Code: "file_too_large",
						Message: "the file is larger than 4 MiB; split it"}
				}
				return echo.ErrStatusRequestEntityTooLarge
			}
			return httperr.BadRequest("bad_body", "the request body could not be read")
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		ctx := req.Context()
		claim, replay, err := h.Idempotency.Begin(ctx, shopOf(c).ID, key,
			idempotency.Fingerprint(req.Method, req.URL.RequestURI(), body))
		if err != nil {
			return err
		}
		if replay != nil {
			hd := c.Response().Header()
			hd.Set(idempotency.ReplayedHeader, "true")
			if replay.Location != "" {
				hd.Set(echo.HeaderLocation, replay.Location)
			}
			if replay.CacheControl != "" {
				hd.Set(echo.HeaderCacheControl, replay.CacheControl)
			}
			if len(replay.Body) == 0 {
				return c.NoContent(replay.Status)
			}
			return c.Blob(replay.Status, replay.ContentType, replay.Body)
		}

		// Run it, keeping a copy of what it writes. A panic gives the key back (the
		// recover middleware answers 500) so that the retry runs again.
		res := c.Response()
		orig := res.Writer
		rec := &recorder{ResponseWriter: orig}
		res.Writer = rec
		finished := false
		defer func() {
			res.Writer = orig
			if !finished {
				_ = h.Idempotency.Release(context.WithoutCancel(ctx), claim)
			}
		}()
		if err := next(c); err != nil {
			// Answer the error here, through the recorder, so that it is kept too.
			c.Error(err)
		}
		finished = true
		hd := res.Header()
		answer := idempotency.Answer{Status: res.Status, ContentType: hd.Get(echo.HeaderContentType),
			Location: hd.Get(echo.HeaderLocation), CacheControl: hd.Get(echo.HeaderCacheControl), Body: rec.body.Bytes()}
		if kept, ok := c.Get(replayBodyKey).([]byte); ok {
			answer.Body = kept
		}
		if err := h.Idempotency.Finish(context.WithoutCancel(ctx), claim, answer); err != nil {
			// The answer went out; only its replay is lost, and the key stays taken
			// until it goes stale. Log it: the client will get a 409 on a retry soon.
			logger(c).ErrorContext(ctx, "store idempotent answer", "error", err)
		}
		return nil
	}
}

// replayBodyKey is where a handler leaves, in its echo.Context, the body its retries get
// instead of the one it sends (keepForReplay).
const replayBodyKey = "shopapi.replay_body"

// keepForReplay makes v, as JSON, the body that a retry of this request with its
// Idempotency-Key gets, instead of the answer sent now: an answer holding a secret shown
// once is kept, and given again, without it. Without a key nothing is kept and v is
// unused.
func keepForReplay(c echo.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the answer kept for retries: %w", err)
	}
	c.Set(replayBodyKey, append(b, '\n'))
	return nil
}

// logger is the request's logger (httperr.LoggerKey), or one that discards.
func logger(c echo.Context) *slog.Logger {
	if l, ok := c.Get(httperr.LoggerKey).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// recorder keeps a copy of the body an answer writes.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ---- the calendar feed ----

// CalendarPath is the calendar feed's route: /calendar/<token>.ics, public (the secret
// token in the path is the credential). Register adds it.
const CalendarPath = "/calendar/:file"

// redactedCalendarPath replaces the feed's path in the request before anything can log
// it: the token is a credential.
const redactedCalendarPath = "/calendar/(token).ics"

func (h *Handlers) calendarFeed(c echo.Context) error {
	file := c.Param("file")
	req := c.Request()
	req.URL.Path, req.URL.RawPath, req.RequestURI = redactedCalendarPath, "", redactedCalendarPath
	token, ok := strings.CutSuffix(file, ".ics")
	if !ok || h.Calendar == nil {
		return echo.ErrNotFound
	}
	var opts calendar.Options
	switch c.QueryParam("include_open") {
	case "", "0", "false":
	case "1", "true":
		opts.IncludeOpen = true
	default:
		return httperr.BadRequestField("bad_query", "include_open", "include_open must be 1 or 0")
	}
	feed, err := h.Calendar.Feed(req.Context(), token, opts)
	if errors.Is(err, calendar.ErrNotFound) {
		return echo.ErrNotFound
	}
	if err != nil {
		return err
	}
	hd := c.Response().Header()
	hd.Set("ETag", feed.ETag)
	// Clients poll: they may keep it, but must ask again (with If-None-Match) before
	// using it; shared caches must not keep a secret address's content.
	hd.Set(echo.HeaderCacheControl, "private, no-cache")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Robots-Tag", "noindex")
	if etagMatches(req.Header.Get("If-None-Match"), feed.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", feed.Body)
}

// etagMatches reports whether an If-None-Match header names etag (weak comparison, as
// RFC 9110 has it for If-None-Match), or is "*".
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
