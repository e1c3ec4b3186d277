// Package httperr is the one place where errors become HTTP answers. Every error answer
// has the same JSON shape,
//
//	{"error": {"code": "invalid_timezone", "message": "...", "field": "timezone"}}
//
// with a stable code a client can branch on, a message fit for the person who sent the
// request, and "field" only when one input is at fault. Domain problems map by kind
// (problem.Invalid → 422, NotFound → 404, Conflict → 409, Unauthorized → 401,
// Unavailable → 503); echo's own errors (no route, wrong method, body too large,
// timeouts) get the same shape; anything else is a 500 whose body says only
// "internal error" while the real error goes to the log.
package httperr

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// LoggerKey is the echo context key under which a request-scoped *slog.Logger (one that
// carries the request id, say) may be stored. Write logs with it when it is there.
const LoggerKey = "logger"

// Error is an HTTP-level error that has no domain kind, such as a body that is not
// JSON. Handlers return it; Write answers with its status, code, message and field.
type Error struct {
	Status  int
	Code    string
	Message string
	Field   string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// BadRequest is a 400 for a request the server cannot read at all (malformed JSON, a
// value of the wrong type). Input that is readable but wrong is a problem.Invalid (422).
func BadRequest(code, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: message}
}

// BadRequestField is BadRequest naming the input at fault.
func BadRequestField(code, field, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Field: field, Message: message}
}

// Body is the JSON document of every error answer.
type Body struct {
	Error Detail `json:"error"`
}

// Detail is what went wrong: a stable code, a human message and, when one input is at
// fault, its name.
type Detail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Handler returns the echo error handler for the whole server: it answers every error a
// handler or middleware returns, including echo's own, through Write, and logs with log
// unless the request carries its own logger under LoggerKey.
func Handler(log *slog.Logger) echo.HTTPErrorHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(err error, c echo.Context) {
		if _, ok := c.Get(LoggerKey).(*slog.Logger); !ok {
			c.Set(LoggerKey, log)
		}
		if werr := Write(c, err); werr != nil {
			logger(c).Debug("write error answer", "error", werr)
		}
	}
}

// Write answers the request with err in the shared JSON shape. Errors that are the
// server's fault are logged (with the request's logger, see LoggerKey) and answered with
// "internal error" only: their text may hold SQL, hostnames or worse.
func Write(c echo.Context, err error) error {
	status, d, internal := Classify(err)
	if internal {
		logger(c).Error("request failed", "error", err, "status", status, "method", c.Request().Method,
			"route", c.Path(), "path", c.Request().URL.Path, "request_id", requestID(c))
	} else if status == http.StatusServiceUnavailable {
		logger(c).Warn("request unavailable", "error", err, "code", d.Code, "method", c.Request().Method,
			"route", c.Path(), "path", c.Request().URL.Path, "request_id", requestID(c))
	}
	if c.Response().Committed {
		// The handler already started its answer; all that is left is the log.
		return nil
	}
	h := c.Response().Header()
	if p, ok := problem.As(err); ok && p.Kind == problem.Limited && p.RetryAfter > 0 && h.Get("Retry-After") == "" {
		h.Set("Retry-After", strconv.FormatInt(int64((p.RetryAfter+time.Second-1)/time.Second), 10))
	}
	if status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", "Bearer")
	}
	if status == http.StatusMethodNotAllowed && h.Get(echo.HeaderAllow) == "" {
		if allow, ok := c.Get(echo.ContextKeyHeaderAllow).(string); ok && allow != "" {
			h.Set(echo.HeaderAllow, allow)
		}
	}
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	return c.JSON(status, Body{Error: d})
}

// Classify maps err to its status and answer. internal reports that the error is the
// server's fault and its text must not reach the client.
func Classify(err error) (status int, d Detail, internal bool) {
	if p, ok := problem.As(err); ok {
		st := problemStatus(p.Kind)
		if st == http.StatusInternalServerError {
			return st, internalDetail(), true
		}
		return st, Detail{Code: p.Code, Message: p.Message, Field: p.Field}, false
	}
	var he *Error
	if errors.As(err, &he) {
		st := he.Status
		if st < 400 || st > 599 {
			st = http.StatusInternalServerError
		}
		if st >= 500 && st != http.StatusServiceUnavailable {
			return st, internalDetail(), true
		}
		return st, Detail{Code: cmp.Or(he.Code, codeFor(st)), Message: cmp.Or(he.Message, messageFor(st)), Field: he.Field}, false
	}
	var ee *echo.HTTPError
	if errors.As(err, &ee) {
		return echoError(ee)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, Detail{Code: "timeout", Message: messageFor(http.StatusServiceUnavailable)}, false
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this answer, but it is not our fault either.
		return http.StatusServiceUnavailable, Detail{Code: "canceled", Message: "the request was canceled"}, false
	}
	return http.StatusInternalServerError, internalDetail(), true
}

func echoError(ee *echo.HTTPError) (int, Detail, bool) {
	// echo wraps the error it answers for (a timeout's context error, a bind error)
	// in Internal; an HTTPError inside an HTTPError is the one that counts.
	if inner, ok := ee.Internal.(*echo.HTTPError); ok {
		ee = inner
	}
	st := ee.Code
	if st < 400 || st > 599 {
		st = http.StatusInternalServerError
	}
	if st == http.StatusServiceUnavailable {
		if errors.Is(ee, context.DeadlineExceeded) {
			return st, Detail{Code: "timeout", Message: messageFor(st)}, false
		}
		return st, Detail{Code: "unavailable", Message: "the service is unavailable; retry shortly"}, false
	}
	if st >= 500 {
		return st, internalDetail(), true
	}
	msg := messageFor(st)
	// A 4xx message echo or a middleware chose on purpose is meant for the client;
	// echo's default (the status text) is replaced by ours.
	if m, ok := ee.Message.(string); ok && m != "" && m != http.StatusText(st) {
		msg = m
	}
	return st, Detail{Code: codeFor(st), Message: msg}, false
}

func problemStatus(k problem.Kind) int {
	switch k {
	case problem.Invalid:
		return http.StatusUnprocessableEntity
	case problem.NotFound:
		return http.StatusNotFound
	case problem.Conflict:
		return http.StatusConflict
	case problem.Unauthorized:
		return http.StatusUnauthorized
	case problem.Unavailable:
		return http.StatusServiceUnavailable
	case problem.Limited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

func internalDetail() Detail {
	return Detail{Code: "internal", Message: "internal error"}
}

// codeFor is the stable code of an answer that carries none of its own.
func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "body_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusUnprocessableEntity:
		return "invalid"
	case http.StatusTooManyRequests:
		return "too_many_requests"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	if t := http.StatusText(status); t != "" {
		return strings.ReplaceAll(strings.ToLower(t), " ", "_")
	}
	return "error"
}

func messageFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "the request could not be read"
	case http.StatusUnauthorized:
		return "a valid bearer token is required"
	case http.StatusNotFound:
		return "no such resource"
	case http.StatusMethodNotAllowed:
		return "this method is not allowed on this resource"
	case http.StatusRequestEntityTooLarge:
		return "the request body is too large"
	case http.StatusTooManyRequests:
		return "too many requests; slow down and retry"
	case http.StatusServiceUnavailable:
		return "the server could not answer in time; retry shortly"
	}
	if t := http.StatusText(status); t != "" {
		return strings.ToLower(t)
	}
	return "error"
}

func logger(c echo.Context) *slog.Logger {
	if l, ok := c.Get(LoggerKey).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

func requestID(c echo.Context) string {
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		return id
	}
	return c.Request().Header.Get(echo.HeaderXRequestID)
}
