package httperr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// syncBuffer is a log sink the handler may write to from the server's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEcho(t *testing.T) (*echo.Echo, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	e := echo.New()
	e.HideBanner = true
	e.Logger.SetOutput(io.Discard) // the Recover middleware prints stacks there
	e.HTTPErrorHandler = httperr.Handler(slog.New(slog.NewJSONHandler(logs, nil)))
	return e, logs
}

type answer struct {
	status int
	header http.Header
	raw    string
	body   httperr.Body
}

func serve(t *testing.T, e *echo.Echo, req *http.Request) answer {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if a.raw != "" {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a.body), "body %q", a.raw)
		require.Equal(t, echo.MIMEApplicationJSON, strings.Split(rec.Header().Get(echo.HeaderContentType), ";")[0])
	}
	return a
}

func TestWriteMapsErrors(t *testing.T) {
	t.Parallel()
	secret := errors.New(`pq: duplicate key value violates unique constraint "x" (SQLSTATE 23505) at db.internal:5432`)
	tests := []struct {
		name      string
		err       error
		status    int
		code      string
		message   string
		field     string
		wantInLog string
		retry     string // the Retry-After header
	}{
		{name: "invalid", err: problem.Invalidf("timezone", "bad zone %q", "Mars/Base"),
			status: 422, code: "invalid_timezone", message: `bad zone "Mars/Base"`, field: "timezone"},
		{name: "invalid wrapped", err: fmt.Errorf("create shop: %w", problem.Invalidf("currency", "nope")),
			status: 422, code: "invalid_currency", message: "nope", field: "currency"},
		{name: "not found", err: problem.New(problem.NotFound, "opening_not_found", "no such opening"),
			status: 404, code: "opening_not_found", message: "no such opening"},
		{name: "conflict", err: &problem.Error{Kind: problem.Conflict, Code: "phone_exists", Field: "phone", Message: "taken"},
			status: 409, code: "phone_exists", message: "taken", field: "phone"},
		{name: "unauthorized", err: problem.New(problem.Unauthorized, "unauthorized", "key please"),
			status: 401, code: "unauthorized", message: "key please"},
		{name: "unavailable", err: problem.New(problem.Unavailable, "redis_down", "try again shortly"),
			status: 503, code: "redis_down", message: "try again shortly"},
		{name: "limited", err: fmt.Errorf("reply: %w", &problem.Error{Kind: problem.Limited, Code: "too_many_replies", Message: "slow down", RetryAfter: 1500 * time.Millisecond}),
			status: 429, code: "too_many_replies", message: "slow down", retry: "2"},
		{name: "problem of unknown kind", err: &problem.Error{Code: "weird", Message: "do not show"},
			status: 500, code: "internal", message: "internal error"},
		{name: "bad request", err: httperr.BadRequest("bad_json", "the body is not JSON"),
			status: 400, code: "bad_json", message: "the body is not JSON"},
		{name: "bad request with field", err: httperr.BadRequestField("bad_json", "wave_size", "wave_size must be an integer"),
			status: 400, code: "bad_json", message: "wave_size must be an integer", field: "wave_size"},
		{name: "http error 5xx hides its text", err: &httperr.Error{Status: 502, Code: "upstream", Message: "stripe at 10.0.0.3 said no"},
			status: 502, code: "internal", message: "internal error"},
		{name: "internal", err: fmt.Errorf("insert shop: %w", secret),
			status: 500, code: "internal", message: "internal error", wantInLog: "SQLSTATE 23505"},
		{name: "deadline", err: fmt.Errorf("list openings: %w", context.DeadlineExceeded),
			status: 503, code: "timeout"},
		{name: "canceled", err: context.Canceled, status: 503, code: "canceled"},
		{name: "echo 4xx keeps its chosen message", err: echo.NewHTTPError(http.StatusBadRequest, "missing id"),
			status: 400, code: "bad_request", message: "missing id"},
		{name: "echo 5xx hides its message", err: echo.NewHTTPError(http.StatusInternalServerError, "dial tcp 10.0.0.1"),
			status: 500, code: "internal", message: "internal error"},
		{name: "echo 413", err: echo.ErrStatusRequestEntityTooLarge, status: 413, code: "body_too_large"},
		{name: "echo error inside echo error", err: echo.ErrBadRequest.WithInternal(echo.ErrUnsupportedMediaType),
			status: 415, code: "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, logs := newEcho(t)
			e.GET("/x", func(echo.Context) error { return tt.err })
			a := serve(t, e, httptest.NewRequest(http.MethodGet, "/x", nil))
			require.Equal(t, tt.status, a.status, a.raw)
			require.Equal(t, tt.code, a.body.Error.Code)
			require.NotEmpty(t, a.body.Error.Message)
			if tt.message != "" {
				require.Equal(t, tt.message, a.body.Error.Message)
			}
			require.Equal(t, tt.field, a.body.Error.Field)
			if tt.field == "" {
				require.NotContains(t, a.raw, `"field"`)
			}
			if tt.status == 401 {
				require.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
			}
			require.Equal(t, tt.retry, a.header.Get("Retry-After"))
			for _, leak := range []string{"pq:", "SQLSTATE", "10.0.0", "goroutine", "do not show"} {
				require.NotContains(t, a.raw, leak)
			}
			if tt.wantInLog != "" {
				require.Contains(t, logs.String(), tt.wantInLog)
				require.Contains(t, logs.String(), `"path":"/x"`)
			}
		})
	}
}

func TestHandlerEchoErrors(t *testing.T) {
	t.Parallel()
	e, _ := newEcho(t)
	e.Use(middleware.BodyLimit("64K"))
	e.POST("/things", func(c echo.Context) error {
		var v struct {
			N int `json:"n"`
		}
		if err := c.Bind(&v); err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, v)
	})
	e.POST("/read", func(c echo.Context) error {
		_, err := io.ReadAll(c.Request().Body)
		return err
	})
	e.GET("/slow", func(c echo.Context) error {
		<-c.Request().Context().Done()
		return fmt.Errorf("query: %w", c.Request().Context().Err())
	}, middleware.ContextTimeout(20*time.Millisecond))
	e.GET("/panic", func(echo.Context) error { panic("boom at db.internal") }, middleware.Recover())

	big := strings.Repeat("x", 2<<20)
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"no route", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/nope", nil) }, 404, "not_found"},
		{"wrong method", func() *http.Request { return httptest.NewRequest(http.MethodDelete, "/things", nil) }, 405, "method_not_allowed"},
		{"body too large by length", func() *http.Request {
			return httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(big))
		}, 413, "body_too_large"},
		{"body too large while reading", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/read", io.MultiReader(strings.NewReader(big)))
			r.ContentLength = -1 // chunked: only the reader can tell
			return r
		}, 413, "body_too_large"},
		{"bind error", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(`{"n":`))
			r.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			return r
		}, 400, "bad_request"},
		{"timeout", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/slow", nil) }, 503, "timeout"},
		{"panic", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/panic", nil) }, 500, "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := serve(t, e, tt.req())
			require.Equal(t, tt.status, a.status, a.raw)
			require.Equal(t, tt.code, a.body.Error.Code)
			require.NotEmpty(t, a.body.Error.Message)
			require.NotContains(t, a.raw, "goroutine")
			require.NotContains(t, a.raw, "db.internal")
			if tt.status == 405 {
				require.Contains(t, a.header.Get(echo.HeaderAllow), http.MethodPost)
			}
		})
	}
}

func TestHeadAnswersWithoutBody(t *testing.T) {
	t.Parallel()
	e, _ := newEcho(t)
	e.HEAD("/x", func(echo.Context) error { return problem.New(problem.NotFound, "gone", "gone") })
	a := serve(t, e, httptest.NewRequest(http.MethodHead, "/x", nil))
	require.Equal(t, 404, a.status)
	require.Empty(t, a.raw)
}

func TestCommittedAnswerIsLeftAlone(t *testing.T) {
	t.Parallel()
	e, logs := newEcho(t)
	e.GET("/x", func(c echo.Context) error {
		if err := c.String(http.StatusOK, "partial"); err != nil {
			return err
		}
		return errors.New("stream broke")
	})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "partial", rec.Body.String())
	require.Contains(t, logs.String(), "stream broke")
}

func TestRequestLoggerIsPreferred(t *testing.T) {
	t.Parallel()
	e, serverLogs := newEcho(t)
	reqLogs := &syncBuffer{}
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(httperr.LoggerKey, slog.New(slog.NewJSONHandler(reqLogs, nil)).With("request_id", "r-1"))
			return next(c)
		}
	})
	e.GET("/x", func(echo.Context) error { return errors.New("disk on fire") })
	a := serve(t, e, httptest.NewRequest(http.MethodGet, "/x", nil))
	require.Equal(t, 500, a.status)
	require.Contains(t, reqLogs.String(), "disk on fire")
	require.Contains(t, reqLogs.String(), `"request_id":"r-1"`)
	require.NotContains(t, serverLogs.String(), "disk on fire")
}

func TestWriteDirectly(t *testing.T) {
	t.Parallel()
	e := echo.New()
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodPost, "/x", nil), rec)
	require.NoError(t, httperr.Write(c, problem.Invalidf("starts_at", "starts_at must be in the future")))
	require.Equal(t, 422, rec.Code)
	require.JSONEq(t, `{"error":{"code":"invalid_starts_at","message":"starts_at must be in the future","field":"starts_at"}}`, rec.Body.String())
}
