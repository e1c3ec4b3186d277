package twiliofake

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// documents are Twilio's OpenAPI descriptions of the APIs the product touches, copied
// unchanged from Twilio's twilio-oai repository (testdata/twilio-oai/README.md says
// from where; MIT, LICENSE beside them). twilio-go is generated from the same files.
//
//go:embed testdata/twilio-oai/twilio_api_v2010.json
//go:embed testdata/twilio-oai/twilio_messaging_v1.json
//go:embed testdata/twilio-oai/twilio_trusthub_v1.json
var documents embed.FS

// documentNames are the embedded documents, one per Twilio host: api.twilio.com
// (Messages), messaging.twilio.com (Messaging Services, A2P brands and campaigns) and
// trusthub.twilio.com (customer profiles). The fake serves them all on one base URL and
// routes by path: their paths do not collide.
var documentNames = []string{"twilio_api_v2010.json", "twilio_messaging_v1.json", "twilio_trusthub_v1.json"}

// Violation is one way a request to the fake, an answer from it or a status callback it
// sent falls outside Twilio's contract as its OpenAPI documents write it.
type Violation struct {
	// Operation is Twilio's operationId ("CreateMessage"), or the method and path when
	// the documents have no operation for the request.
	Operation string
	// Where is "request", "answer" or "status callback".
	Where string
	// Problem says what is wrong, naming the parameter or property.
	Problem string
}

// String is the violation on one line: "CreateMessage request: parameter "Priority" is
// not one of the operation's".
func (v Violation) String() string {
	return v.Operation + " " + v.Where + ": " + v.Problem
}

// Contract is Twilio's API as its published OpenAPI documents describe it: every
// operation's parameters, request body and successful answers. It checks requests
// (CheckRequest), answers (CheckAnswer) and status callbacks (CheckStatusCallback). A
// Contract is safe for concurrent use.
type Contract struct {
	docs []contractDoc
	// message is the Message resource's schema (api.v2010.account.message), the only
	// description of a status callback's fields the documents have.
	message *openapi3.Schema
	// reqOpts check requests' parameters (checkBody their bodies); opts check answers.
	reqOpts, opts *openapi3filter.Options
	// LoadTime is how long reading and checking the documents took.
	LoadTime time.Duration
}

type contractDoc struct {
	name   string
	doc    *openapi3.T
	router routers.Router
}

// loadContract reads the documents once per process: they are large (2.7 MB of JSON)
// and tests make hundreds of fakes.
var loadContract = sync.OnceValues(func() (*Contract, error) {
	start := time.Now()
	validation := schemaOpts()
	c := &Contract{
		reqOpts: &openapi3filter.Options{
			MultiError: true,
			// The fake checks credentials itself and answers 401 as Twilio does: a
			// missing or wrong password is not a contract matter.
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			ExcludeRequestBody:      true, // checkBody
			SkipSettingDefaults:     true,
			SchemaValidationOptions: validation,
		},
		opts: &openapi3filter.Options{
			MultiError:              true,
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus:   true,
			SkipSettingDefaults:     true,
			SchemaValidationOptions: validation,
		},
		docs: make([]contractDoc, len(documentNames)),
	}
	errs := make([]error, len(documentNames))
	var wg sync.WaitGroup
	for i, name := range documentNames {
		wg.Go(func() {
			c.docs[i], errs[i] = loadDocument(name)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ref := c.docs[0].doc.Components.Schemas["api.v2010.account.message"]
	if ref == nil || ref.Value == nil {
		return nil, errors.New("twiliofake: twilio_api_v2010.json has no api.v2010.account.message schema")
	}
	c.message = ref.Value
	c.LoadTime = time.Since(start)
	return c, nil
})

// loadDocument reads one embedded document, without its prose, and routes its paths.
func loadDocument(name string) (contractDoc, error) {
	b, err := documents.ReadFile("testdata/twilio-oai/" + name)
	if err != nil {
		return contractDoc{}, err
	}
	if b, err = withoutProse(b); err != nil {
		return contractDoc{}, fmt.Errorf("twiliofake: %s: %w", name, err)
	}
	doc := &openapi3.T{}
	if err := json.Unmarshal(b, doc); err != nil {
		return contractDoc{}, fmt.Errorf("twiliofake: %s: %w", name, err)
	}
	if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
		return contractDoc{}, fmt.Errorf("twiliofake: %s: %w", name, err)
	}
	// The documents name a server per host (https://api.twilio.com, ...); the fake
	// serves every path on its own base URL, so route on the path alone.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
	// Twilio's own examples do not all fit its schemas (a vetting SID "VT12445353",
	// trunk SIDs that are not hex); they are gone anyway (withoutProse).
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		return contractDoc{}, fmt.Errorf("twiliofake: %s: %w", name, err)
	}
	return contractDoc{name: name, doc: doc, router: router}, nil
}

// withoutProse drops what does not constrain a request or an answer (descriptions,
// summaries, examples and Twilio's x-twilio notes) from a document: two thirds of its
// bytes, and as much of the time kin-openapi takes to load it (the three documents load
// in about 0.25 s instead of 0.5-0.7 s on this 2-core machine, 1.4 s instead of 3.2 s
// under -race). TestWithoutProseKeepsTheContract checks that nothing else goes.
func withoutProse(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(dropProse(v, false))
}

// nameMaps are the OpenAPI fields whose keys are names (of properties, paths, media
// types, ...), not fields: a property called "description" is kept.
var nameMaps = map[string]bool{"properties": true, "schemas": true, "paths": true, "parameters": true,
	"responses": true, "headers": true, "content": true, "securitySchemes": true, "callbacks": true,
	"requestBodies": true, "encoding": true, "links": true, "variables": true, "mapping": true}

func dropProse(v any, names bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !names {
				switch k {
				case "description":
					v[k] = "" // a response must have one
					continue
				case "summary", "examples", "example", "x-twilio":
					delete(v, k)
					continue
				}
			}
			v[k] = dropProse(e, !names && nameMaps[k])
		}
	case []any:
		for i, e := range v {
			v[i] = dropProse(e, false)
		}
	}
	return v
}

// LoadContract returns the process's Contract, reading the embedded documents the first
// time it is called.
func LoadContract() (*Contract, error) { return loadContract() }

// formats checks the string formats Twilio's documents use that kin-openapi does not
// know. "phone-number" is left alone: Twilio's takes E.164 numbers, short codes,
// alphanumeric sender IDs and channel addresses (whatsapp:+1...), so a format check
// could only refuse an empty string; the fake checks To as E.164 itself (21211).
var formats = map[string]openapi3.StringFormatValidator{
	// date_created and the like: "Thu, 24 Aug 2023 05:01:45 +0000".
	"date-time-rfc-2822": openapi3.NewCallbackValidator(func(s string) error {
		if _, err := time.Parse(time.RFC1123Z, s); err != nil {
			return errors.New("not an RFC 2822 date-time such as \"Thu, 24 Aug 2023 05:01:45 +0000\"")
		}
		return nil
	}),
	"uri": openapi3.NewCallbackValidator(func(s string) error {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
			return errors.New("not an absolute URL")
		}
		return nil
	}),
}

// Match is the operation a request was routed to, for CheckAnswer.
type Match struct {
	// Operation is Twilio's operationId, such as "CreateMessage".
	Operation string
	// PathParams holds the path's parameters by name ("AccountSid").
	PathParams map[string]string
	route      *routers.Route
	req        *http.Request
}

// CheckRequest routes the request (by method and path; host and scheme are ignored) to
// Twilio's operation and checks it against the operation: its path, query and body
// parameters, each present one declared by the operation, each required one present and
// every value of the declared type and format. body is the request's body, already read
// (r.Body is not). A form body's repeated keys read as arrays, and its values are converted
// to the schema's booleans, integers and numbers before they are checked. The Match is nil
// when the documents have no such operation.
func (c *Contract) CheckRequest(r *http.Request, body []byte) (*Match, []Violation) {
	req := r.Clone(context.Background())
	req.URL = &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	req.Host = ""
	req.RequestURI = ""
	req.Body = http.NoBody
	if len(body) > 0 {
		req.Body = readCloser{bytes.NewReader(body)}
		req.ContentLength = int64(len(body))
	}
	route, params, err := c.route(req)
	if err != nil {
		return nil, []Violation{{Operation: r.Method + " " + r.URL.Path, Where: "request", Problem: err.Error()}}
	}
	m := &Match{Operation: route.Operation.OperationID, PathParams: params, route: route, req: req}
	violation := func(problem string) Violation {
		return Violation{Operation: m.Operation, Where: "request", Problem: problem}
	}
	var out []Violation

	// kin-openapi checks the path, query and header parameters; the form body is decoded
	// and checked below, where every problem is reported, not only the first value that
	// does not parse.
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.reqOpts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		for _, p := range problems(err) {
			out = append(out, violation(p))
		}
	}
	// Unknown query parameters: OpenAPI ignores those an operation does not declare;
	// Twilio's operations take none.
	declared := map[string]bool{}
	for _, p := range route.Operation.Parameters {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
			declared[p.Value.Name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(req.URL.Query())) {
		if !declared[name] {
			out = append(out, violation(fmt.Sprintf("query parameter %q is not one of the operation's", name)))
		}
	}
	for _, p := range c.checkBody(route.Operation, r.Header.Get("Content-Type"), body) {
		out = append(out, violation(p))
	}
	return m, out
}

// checkBody checks a request body against the operation's form schema. The form is read
// as Twilio reads it: a repeated key is an array (MediaUrl, PersistentAction, the
// keyword lists of a campaign), booleans are "true" or "false", integers and numbers
// are decimal. The decoded object is then validated against the schema, and each key the
// schema does not list is reported: OpenAPI lets an object have properties it does not
// list, Twilio's operations have none.
func (c *Contract) checkBody(op *openapi3.Operation, contentType string, body []byte) []string {
	rb := op.RequestBody
	if rb == nil || rb.Value == nil {
		if len(body) > 0 {
			return []string{"the operation takes no body"}
		}
		return nil
	}
	schema := formSchema(rb.Value)
	if len(body) > 0 {
		mediaType, _, _ := strings.Cut(contentType, ";")
		mediaType = strings.ToLower(strings.TrimSpace(mediaType))
		if rb.Value.Content.Get(mediaType) == nil {
			return []string{fmt.Sprintf("content type %q is not one the operation takes (%s)", contentType,
				strings.Join(slices.Sorted(maps.Keys(rb.Value.Content)), ", "))}
		}
	}
	if schema == nil {
		return []string{"twiliofake cannot check this operation's body: it is not a form"}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return []string{"the form does not parse: " + err.Error()}
	}
	var out []string
	unparsed := map[string]bool{} // reported already; not "missing" as well
	obj := make(map[string]any, len(form))
	for _, name := range slices.Sorted(maps.Keys(form)) {
		ref := schema.Properties[name]
		if ref == nil || ref.Value == nil {
			out = append(out, fmt.Sprintf("parameter %q is not one of the operation's", name))
			continue
		}
		vs := form[name]
		if ref.Value.Type.Is(openapi3.TypeArray) {
			var items *openapi3.Schema
			if ref.Value.Items != nil {
				items = ref.Value.Items.Value
			}
			arr := make([]any, 0, len(vs))
			for _, s := range vs {
				v, err := formValue(items, s)
				if err != nil {
					out = append(out, fmt.Sprintf("parameter %q: %v", name, err))
					unparsed[name] = true
					continue
				}
				arr = append(arr, v)
			}
			obj[name] = arr
			continue
		}
		if len(vs) > 1 {
			out = append(out, fmt.Sprintf("parameter %q is sent %d times, but it is not an array", name, len(vs)))
		}
		v, err := formValue(ref.Value, vs[0])
		if err != nil {
			out = append(out, fmt.Sprintf("parameter %q: %v", name, err))
			unparsed[name] = true
			continue
		}
		obj[name] = v
	}
	if err := schema.VisitJSON(obj, schemaOpts(openapi3.VisitAsRequest())...); err != nil {
		var errs openapi3.MultiError
		if !errors.As(err, &errs) {
			errs = openapi3.MultiError{err}
		}
		for _, e := range errs {
			var se *openapi3.SchemaError
			if !errors.As(e, &se) {
				out = append(out, problems(e)...)
				continue
			}
			if p := se.JSONPointer(); se.SchemaField == "required" && len(p) == 1 && unparsed[p[0]] {
				continue
			}
			out = append(out, formProblem(se))
		}
	}
	return out
}

// formProblem says what is wrong with a form's parameter, by its name.
func formProblem(se *openapi3.SchemaError) string {
	p := se.JSONPointer()
	if len(p) == 0 {
		return se.Error()
	}
	if se.SchemaField == "required" && len(p) == 1 {
		return fmt.Sprintf("required parameter %q is missing", p[0])
	}
	where := fmt.Sprintf("parameter %q", p[0])
	if len(p) > 1 {
		where += " at /" + strings.Join(p[1:], "/")
	}
	reason := se.Reason
	if se.Origin != nil {
		reason = se.Origin.Error()
	}
	return where + ": " + reason
}

// formSchema is the schema of a request body's form, or nil.
func formSchema(rb *openapi3.RequestBody) *openapi3.Schema {
	mt := rb.Content.Get("application/x-www-form-urlencoded")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || !mt.Schema.Value.Type.Is(openapi3.TypeObject) {
		return nil
	}
	return mt.Schema.Value
}

// formValue converts one form value to the JSON value the schema describes.
func formValue(s *openapi3.Schema, v string) (any, error) {
	switch {
	case s == nil:
		return v, nil
	case s.Type.Is(openapi3.TypeBoolean):
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (true or false)", v)
	case s.Type.Is(openapi3.TypeInteger):
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return float64(n), nil
	case s.Type.Is(openapi3.TypeNumber):
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case s.Type.Is(openapi3.TypeObject):
		// Twilio's forms carry objects as JSON strings (ContentVariables is a string in
		// the documents; a few v1 operations type such fields as objects).
		var o any
		if err := json.Unmarshal([]byte(v), &o); err != nil {
			return nil, fmt.Errorf("%q is not a JSON object", v)
		}
		return o, nil
	}
	return v, nil
}

// schemaOpts are the options every schema check uses: every problem, one line each,
// naming the field without a dump of the schema, and Twilio's formats.
func schemaOpts(more ...openapi3.SchemaValidationOption) []openapi3.SchemaValidationOption {
	return append([]openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.DisableSchemaErrorDetails(),
		openapi3.WithStringFormatValidators(formats)}, more...)
}

// route finds the operation in whichever document has the request's path.
func (c *Contract) route(req *http.Request) (*routers.Route, map[string]string, error) {
	for _, d := range c.docs {
		if route, params, err := d.router.FindRoute(req); err == nil && !slices.Contains(slices.Collect(maps.Values(params)), "") {
			// (kin-openapi's router lets a {Sid} match nothing: DELETE /v1/Services
			// would be DeleteService with an empty Sid.)
			return route, params, nil
		}
	}
	// Say whether the path is Twilio's with other methods, or not Twilio's at all.
	var methods []string
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		other := req.Clone(context.Background())
		other.Method = method
		for _, d := range c.docs {
			if route, _, err := d.router.FindRoute(other); err == nil && method != req.Method {
				methods = append(methods, method+" ("+route.Operation.OperationID+")")
			}
		}
	}
	if len(methods) > 0 {
		return nil, nil, fmt.Errorf("Twilio's API has no %s operation on this path, only %s", req.Method, strings.Join(methods, ", "))
	}
	return nil, nil, fmt.Errorf("Twilio's API has no such path (in %s)", strings.Join(documentNames, ", "))
}

// CheckAnswer checks an answer to the matched request. A 2xx answer must be one of the
// operation's documented statuses, with a documented content type and a body that fits
// its schema, with no property the schema does not list. The documents describe no error
// answers, so one that is not 2xx is held instead to the error body Twilio's REST APIs
// all answer with, which its docs describe outside these documents: code, message,
// more_info and status, the last equal to the HTTP status.
func (c *Contract) CheckAnswer(m *Match, status int, header http.Header, body []byte) []Violation {
	violation := func(problem string) Violation {
		return Violation{Operation: m.Operation, Where: "answer", Problem: problem}
	}
	var out []Violation
	if status < 200 || status > 299 {
		for _, p := range checkErrorBody(status, body) {
			out = append(out, violation(fmt.Sprintf("%d: %s", status, p)))
		}
		return out
	}
	if m.route == nil {
		return []Violation{violation(fmt.Sprintf("Twilio has no such operation, so never answers %d", status))}
	}
	if m.route.Operation.Responses.Status(status) == nil {
		var documented []string
		for code := range m.route.Operation.Responses.Map() {
			documented = append(documented, code)
		}
		slices.Sort(documented)
		return []Violation{violation(fmt.Sprintf("Twilio answers %s with %s, never %d",
			m.Operation, strings.Join(documented, " or "), status))}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: m.req, PathParams: m.PathParams, Route: m.route, Options: c.opts},
		Status:                 status, Header: header, Options: c.opts,
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		for _, p := range problems(err) {
			out = append(out, violation(fmt.Sprintf("%d: %s", status, p)))
		}
		return out
	}
	if resp := m.route.Operation.Responses.Status(status); resp != nil && resp.Value != nil {
		if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			var v any
			if err := json.Unmarshal(body, &v); err == nil {
				for _, p := range undeclared(mt.Schema.Value, v, "") {
					out = append(out, violation(fmt.Sprintf("%d: %s", status, p)))
				}
			}
		}
	}
	return out
}

// undeclared lists the properties of v that its object schemas do not list. Twilio's
// schemas leave additionalProperties unset (OpenAPI then allows anything), yet an
// answer with a property Twilio's resource does not have is one Twilio could not give.
func undeclared(s *openapi3.Schema, v any, at string) []string {
	if s == nil {
		return nil
	}
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if len(s.Properties) == 0 || s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil ||
			len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p, ok := s.Properties[k]
			if !ok {
				out = append(out, fmt.Sprintf("property %q at %q is not one the documents list", k, at+"/"))
				continue
			}
			out = append(out, undeclared(p.Value, v[k], at+"/"+k)...)
		}
	case []any:
		if s.Items != nil {
			for i, e := range v {
				out = append(out, undeclared(s.Items.Value, e, at+"/"+strconv.Itoa(i))...)
			}
		}
	}
	return out
}

// errorSchema is Twilio's error body (the same for every REST API; the OpenAPI documents
// do not describe it).
var errorSchema = &openapi3.Schema{
	Type:     &openapi3.Types{openapi3.TypeObject},
	Required: []string{"code", "message", "more_info", "status"},
	Properties: openapi3.Schemas{
		"code":      {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeInteger}}},
		"message":   {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, MinLength: 1}},
		"more_info": {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Format: "uri"}},
		"status":    {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeInteger}}},
	},
}

// checkErrorBody holds an error answer to Twilio's error body.
func checkErrorBody(status int, body []byte) []string {
	if status < 400 || status > 599 {
		return []string{"Twilio answers a REST API request with 2xx, or 4xx/5xx and an error body"}
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"the error body is not a JSON object: " + err.Error()}
	}
	var out []string
	if err := errorSchema.VisitJSON(jsonValue(v), schemaOpts()...); err != nil {
		out = append(out, problems(err)...)
	}
	out = append(out, undeclared(errorSchema, v, "")...)
	if n, ok := v["status"].(json.Number); ok && n.String() != strconv.Itoa(status) {
		out = append(out, fmt.Sprintf("the error body's status %s is not the HTTP status", n))
	}
	return out
}

// jsonValue turns json.Numbers into float64s, which schema validation expects.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}

// callbackFields maps each field of a message status callback to the Message resource's
// property it reports. The documents describe no callback (CreateMessage has no
// `callbacks`; StatusCallback's description only links to Twilio's docs): the names
// are Twilio's ("Twilio's request to the StatusCallback URL" in the Message resource's
// docs), each value is held to its property's schema.
var callbackFields = map[string]string{
	"MessageSid":          "sid",
	"SmsSid":              "sid", // the older twin Twilio still sends
	"MessageStatus":       "status",
	"SmsStatus":           "status",
	"AccountSid":          "account_sid",
	"MessagingServiceSid": "messaging_service_sid",
	"From":                "from",
	"To":                  "to",
	"ErrorCode":           "error_code",
	"ApiVersion":          "api_version",
}

// callbackRequired are the fields every status callback carries.
var callbackRequired = []string{"MessageSid", "MessageStatus", "AccountSid", "ApiVersion", "To"}

// CheckStatusCallback checks the form of a message status callback: each field one Twilio
// sends (callbackFields), each value fitting the Message resource property it reports
// (MessageStatus one of the resource's statuses, MessageSid an SM/MM SID, ErrorCode an
// integer, ...), and the fields every callback carries present.
func (c *Contract) CheckStatusCallback(form url.Values) []Violation {
	var out []Violation
	violation := func(problem string) {
		out = append(out, Violation{Operation: "CreateMessage", Where: "status callback", Problem: problem})
	}
	for _, name := range callbackRequired {
		if form.Get(name) == "" {
			violation(fmt.Sprintf("field %q is missing", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(form)) {
		prop, ok := callbackFields[name]
		if !ok {
			violation(fmt.Sprintf("field %q is not one Twilio sends", name))
			continue
		}
		ref := c.message.Properties[prop]
		if ref == nil || ref.Value == nil {
			violation(fmt.Sprintf("field %q: the Message resource has no property %q", name, prop))
			continue
		}
		if vs := form[name]; len(vs) != 1 {
			violation(fmt.Sprintf("field %q is sent %d times", name, len(vs)))
			continue
		}
		var v any = form.Get(name)
		if ref.Value.Type.Is(openapi3.TypeInteger) {
			n, err := strconv.ParseInt(form.Get(name), 10, 64)
			if err != nil {
				violation(fmt.Sprintf("field %q (%s) is not an integer", name, prop))
				continue
			}
			v = float64(n)
		}
		if err := ref.Value.VisitJSON(v, schemaOpts()...); err != nil {
			for _, p := range problems(err) {
				violation(fmt.Sprintf("field %q (%s): %s", name, prop, p))
			}
		}
	}
	return out
}

// problems flattens kin-openapi's errors into one line per problem, each naming the
// parameter or the body's field.
func problems(err error) []string {
	var out []string
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, e := range e {
			out = append(out, problems(e)...)
		}
		return out
	case *openapi3filter.RequestError:
		prefix := "body: "
		if e.Parameter != nil {
			prefix = fmt.Sprintf("parameter %q in %s: ", e.Parameter.Name, e.Parameter.In)
		}
		if e.Err == nil {
			return []string{prefix + e.Reason}
		}
		for _, p := range problems(e.Err) {
			out = append(out, prefix+p)
		}
		return out
	case *openapi3filter.ResponseError:
		if e.Err == nil {
			return []string{e.Reason}
		}
		for _, p := range problems(e.Err) {
			out = append(out, e.Reason+": "+p)
		}
		return out
	}
	return []string{err.Error()}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
