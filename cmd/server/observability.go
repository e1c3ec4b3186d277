package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
)

// unmatchedRoute is the url label of every request no route matched: the raw path is
// the client's to choose, and each new label value would be a new series kept forever.
const unmatchedRoute = "unmatched"

// httpMetrics counts requests by status code, method and route template only: the
// series echoprometheus's middleware defines (echo_requests_total,
// echo_request_duration_seconds, echo_request_size_bytes, echo_response_size_bytes,
// labelled code, method, host and url), with every label value from a small fixed set.
// echoprometheus's defaults label by the Host header and by the raw path of unmatched
// requests, so random hosts or paths grew /metrics by a series each (600 requests took
// it from 9 KB to 2.7 MB); the host label is kept, always empty, which Prometheus treats
// as no label at all.
//
// It is ours rather than echoprometheus's because that one, on each of a YES's two
// requests, built the label values and looked each of the four series up by them
// (hashing and checking every value), and counted a request refused with an
// httperr.Error as a 500: here each series is looked up once per code, method and route,
// and an error is answered (c.Error) before its status is read.
func httpMetrics(reg prometheus.Registerer) echo.MiddlewareFunc {
	labels := []string{"code", "method", "host", "url"}
	count := prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "echo", Name: "requests_total",
		Help: "How many HTTP requests processed, partitioned by status code and HTTP method."}, labels)
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "echo", Name: "request_duration_seconds",
		Help: "The HTTP request latencies in seconds.", Buckets: prometheus.DefBuckets}, labels)
	sizes := []float64{1 << 10, 2 << 10, 5 << 10, 10 << 10, 100 << 10, 500 << 10, 1 << 20, 2.5 * (1 << 20), 5 << 20, 10 << 20}
	resSize := prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "echo", Name: "response_size_bytes",
		Help: "The HTTP response sizes in bytes.", Buckets: sizes}, labels)
	reqSize := prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "echo", Name: "request_size_bytes",
		Help: "The HTTP request sizes in bytes.", Buckets: sizes}, labels)
	reg.MustRegister(count, duration, resSize, reqSize)

	type key struct {
		code         int
		method, path string
	}
	type series struct {
		count                      prometheus.Counter
		duration, reqSize, resSize prometheus.Observer
	}
	var mu sync.RWMutex
	known := map[key]*series{}
	lookup := func(k key) *series {
		mu.RLock()
		s := known[k]
		mu.RUnlock()
		if s != nil {
			return s
		}
		v := []string{strconv.Itoa(k.code), k.method, "", k.path}
		s = &series{count: count.WithLabelValues(v...), duration: duration.WithLabelValues(v...),
			reqSize: reqSize.WithLabelValues(v...), resSize: resSize.WithLabelValues(v...)}
		mu.Lock()
		known[k] = s
		mu.Unlock()
		return s
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Path() == "/metrics" {
				return next(c)
			}
			req := c.Request()
			size := requestSize(req)
			start := time.Now()
			err := next(c)
			elapsed := time.Since(start).Seconds()
			if err != nil {
				c.Error(err) // answered here, so the status counted is the one sent
			}
			res := c.Response()
			s := lookup(key{code: res.Status, method: methodLabel(req.Method), path: routeLabel(c.Path())})
			s.duration.Observe(elapsed)
			s.count.Inc()
			s.reqSize.Observe(float64(size))
			s.resSize.Observe(float64(res.Size))
			return nil
		}
	}
}

// requestSize is echoprometheus's approximate size of a request: its path, method,
// protocol, headers, host and declared body.
func requestSize(r *http.Request) int {
	s := len(r.URL.Path) + len(r.Method) + len(r.Proto) + len(r.Host)
	for name, values := range r.Header {
		s += len(name)
		for _, v := range values {
			s += len(v)
		}
	}
	if r.ContentLength != -1 {
		s += int(r.ContentLength)
	}
	return s
}

// routeLabel is the route template (/api/openings/:id), or unmatchedRoute.
func routeLabel(path string) string {
	if path == "" {
		return unmatchedRoute
	}
	return path
}

// methodLabel keeps the standard methods and folds any other token a client sends into
// "OTHER".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// metricsHandler is the Prometheus exposition of reg.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// publicMetrics serves GET /metrics on the public port only to those allowed to read it:
//
//   - with METRICS_TOKEN set, to a request bearing it, and to no one else;
//   - else, with METRICS_ADDR set, to no one: metrics live on that listener;
//   - else to a request made straight from loopback (no proxy header), which is how a
//     local Prometheus or an operator on the host reads it.
//
// The figures are not secret, but the page is large and costly to render and tells an
// attacker what the server is doing; it must not be the Internet's to scrape.
func (a *app) publicMetrics(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch {
		case a.cfg.MetricsToken != "":
			if !bearerIs(r, a.cfg.MetricsToken) {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
				return &httperr.Error{Status: http.StatusUnauthorized, Code: "unauthorized",
					Message: "metrics need Authorization: Bearer $METRICS_TOKEN"}
			}
		case a.cfg.MetricsAddr != "":
			return &httperr.Error{Status: http.StatusForbidden, Code: "forbidden",
				Message: "metrics are served on the private metrics listener (METRICS_ADDR), not here"}
		case !directFromLoopback(r):
			return &httperr.Error{Status: http.StatusForbidden, Code: "forbidden",
				Message: "metrics are served only to loopback, or with METRICS_TOKEN; see docs/operations.md"}
		}
		h.ServeHTTP(c.Response(), r)
		return nil
	}
}

// bearerIs reports, in constant time, whether r carries "Authorization: Bearer token".
func bearerIs(r *http.Request, token string) bool {
	scheme, got, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// directFromLoopback reports whether the TCP peer is a loopback address and no proxy
// header says the request was forwarded. A proxy on the same host that adds none of
// these headers would make every request look local: set METRICS_TOKEN then.
func directFromLoopback(r *http.Request) bool {
	for _, h := range []string{"Forwarded", echo.HeaderXForwardedFor, echo.HeaderXRealIP} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// privateMetrics is the METRICS_ADDR listener's handler: /metrics and nothing else.
func privateMetrics(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(reg))
	return mux
}

// pprofHandler is net/http/pprof on its own mux, for the PPROF_ADDR listener only.
// (Importing net/http/pprof also registers it on http.DefaultServeMux, which nothing
// here serves.)
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// maxRequestIDLen bounds a client-supplied X-Request-Id.
const maxRequestIDLen = 64

// requestID gives every request an id, kept from the client's X-Request-Id (a proxy's
// or a caller's, so its logs and ours line up) only when it is at most 64 characters of
// [A-Za-z0-9._-]; anything else is replaced. The id goes into every log line and back
// in the response: unchecked, a client could forge log fields, inject control
// characters or make each line kilobytes long.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		id := req.Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			id = newRequestID()
			req.Header.Set(echo.HeaderXRequestID, id)
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
