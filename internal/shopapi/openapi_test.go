package shopapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
)

// The document and its router, loaded once: every answer of every test in this package
// is checked against it (see env.do).
var (
	specOnce   sync.Once
	specDoc    *openapi3.T
	specRouter routers.Router
	specErr    error
)

func spec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		if specDoc, specErr = loader.LoadFromData(api.OpenAPI); specErr != nil {
			return
		}
		// legacy.NewRouter validates the document (as OpenAPI 3.1: JSON Schema 2020-12)
		// before it routes.
		specRouter, specErr = legacy.NewRouter(specDoc)
	})
	require.NoError(t, specErr, "api/openapi.json loads and validates")
	return specDoc, specRouter
}

// checkAgainstSpec validates one real answer against the document: its status must be
// listed for the operation and its body must match that status's schema. Requests the
// document has no operation for (unknown paths, wrong methods) are routing tests, not
// API answers, and are skipped.
func checkAgainstSpec(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	_, router := spec(t)
	// The router matches the path against the document's server ("/"), so give it the
	// path alone.
	r := req.Clone(context.Background())
	r.URL.Scheme, r.URL.Host, r.Host = "", "", ""
	route, params, err := router.FindRoute(r)
	if err == nil && slices.Contains(slices.Collect(maps.Values(params)), "") {
		// kin-openapi's router lets a path parameter match nothing (GET /api/shops as
		// GET /api/shops/{id}): that is no operation of the document.
		err = routers.ErrPathNotFound
	}
	if err != nil {
		// Only a request the server itself did not route may be missing from the
		// document; an answered /api request the document cannot place is drift.
		if strings.HasPrefix(r.URL.Path, "/api/") && status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			require.NoError(t, err, "%s %s answered %d, but api/openapi.json has no operation for it", req.Method, req.URL.Path, status)
		}
		return
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts},
		Status:                 status, Header: header, Options: opts,
	}
	in.SetBodyBytes(body)
	require.NoError(t, openapi3filter.ValidateResponse(context.Background(), in),
		"%s %s answered %d, which api/openapi.json does not describe: %s", req.Method, req.URL.Path, status, body)
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc, _ := spec(t)
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.NoError(t, doc.Validate(context.Background()))
}

// specRoutes lists "METHOD /path" for every operation of the document.
func specRoutes(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// echoRoutes lists "METHOD /path" for every /api route registered on e, with echo's
// ":id" written as OpenAPI's "{id}", and the calendar feed's (its ":file" is
// "{token}.ics"; HEAD answers as GET does, without the body).
func echoRoutes(e *echo.Echo) []string {
	var out []string
	for _, r := range e.Routes() {
		if r.Path == shopapi.CalendarPath {
			if r.Method != http.MethodHead {
				out = append(out, r.Method+" /calendar/{token}.ics")
			}
			continue
		}
		if !strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = "{" + p[1:] + "}"
			}
		}
		out = append(out, r.Method+" "+strings.Join(parts, "/"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestOpenAPICoversEveryRoute: the document lists exactly the /api routes the server
// registers, walking echo's own route table, so a route added without documentation (or
// documentation left behind by a removed route) fails here.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	doc, _ := spec(t)
	e := echo.New()
	(&shopapi.Handlers{}).Register(e)
	registered, documented := echoRoutes(e), specRoutes(doc)
	var missing, stale []string
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			missing = append(missing, r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(registered, r) {
			stale = append(stale, r)
		}
	}
	require.Empty(t, missing, "routes the server has and api/openapi.json lacks")
	require.Empty(t, stale, "operations in api/openapi.json the server does not have")
	require.GreaterOrEqual(t, len(registered), 15)
}

// TestOpenAPIDeclaresGuessLimits: the server's guess limits (cmd/server's guessLimits,
// in front of these handlers, so the answer checks above never meet them) answer every
// /api route that takes a credential with 429 and Retry-After, and the admin token's
// routes, which fail closed, with 503 while Redis is away: the document says so.
func TestOpenAPIDeclaresGuessLimits(t *testing.T) {
	t.Parallel()
	doc, _ := spec(t)
	checked := 0
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		for method, op := range item.Operations() {
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			admin, credential := false, false
			for _, req := range security {
				for scheme := range req {
					credential = true
					admin = admin || scheme == "adminToken"
				}
			}
			if !credential {
				continue
			}
			checked++
			tooMany := op.Responses.Value("429")
			require.NotNil(t, tooMany, "%s %s: the guess limit's 429 is not declared", method, path)
			require.NotNil(t, tooMany.Value.Headers["Retry-After"], "%s %s: 429 without Retry-After", method, path)
			if admin {
				require.NotNil(t, op.Responses.Value("503"), "%s %s: the admin limit fails closed (503), not declared", method, path)
			}
		}
	}
	require.GreaterOrEqual(t, checked, 15)

	// The answers as cmd/server's limitGuesses writes them fit what is declared.
	answer := func(method, path string, status int, retryAfter, body string) {
		req, err := http.NewRequest(method, "http://x"+path, nil)
		require.NoError(t, err)
		h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {retryAfter}}
		checkAgainstSpec(t, req, status, h, []byte(body))
	}
	answer(http.MethodGet, "/api/shop", http.StatusTooManyRequests, "3",
		`{"error":{"code":"too_many_requests","message":"too many failed attempts from your address; retry in 3 seconds"}}`)
	answer(http.MethodPost, "/api/shops", http.StatusServiceUnavailable, "5",
		`{"error":{"code":"unavailable","message":"credentials cannot be checked right now; retry shortly"}}`)
}

// TestOpenAPIServed: the document is served, as is, without credentials.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodGet, "/api/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var want map[string]any
	require.NoError(t, json.Unmarshal(api.OpenAPI, &want))
	require.Equal(t, want, r.body)
}

// TestSpecCheckCatchesADrift: the answer check is not vacuous — an answer that breaks
// the document (a field of the wrong type, a status it does not list) fails it.
func TestSpecCheckCatchesADrift(t *testing.T) {
	t.Parallel()
	req, err := http.NewRequest(http.MethodGet, "http://x/api/shop", nil)
	require.NoError(t, err)
	spec(t)
	h := http.Header{"Content-Type": {"application/json"}}
	fails := func(status int, body string) (failed bool) {
		ft := &fakeT{}
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fakeFail); !ok {
					panic(r)
				}
				failed = ft.failed
			}
		}()
		checkAgainstSpec(ft, req, status, h, []byte(body))
		return ft.failed
	}
	require.True(t, fails(http.StatusOK, `{"id":"x","name":5}`), "a wrong body is caught")
	require.True(t, fails(http.StatusTeapot, `{"error":{"code":"x","message":"y"}}`), "an undocumented status is caught")
	require.True(t, fails(http.StatusUnauthorized, `{"error":{"message":"y"}}`), "an error without its code is caught")
}

// fakeT records a failure instead of stopping the test.
type fakeT struct {
	testing.TB
	failed bool
	msg    bytes.Buffer
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return "fake" }
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	fmt.Fprintf(&f.msg, format, args...)
}
func (f *fakeT) FailNow() { panic(fakeFail{}) }

type fakeFail struct{}
