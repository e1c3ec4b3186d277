package webhooks

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// form is a Twilio webhook's decoded fields, in the order sent. Twilio's requests are
// on the YES path twice a YES (the text, then the report on its answer), and
// http.Request.ParseForm builds a map, a slice a field and a merged copy of the query
// and the body for each: a tenth of the instances' CPU in a storm of replies went to it
// and to the collector that freed it. This holds the fields in one slice.
type form []twilio.Field

// get is the first value of the field name, or "" (url.Values.Get).
func (f form) get(name string) string {
	for _, x := range f {
		if x.Name == name {
			return x.Value
		}
	}
	return ""
}

// values is f as url.Values, for code that takes them.
func (f form) values() url.Values {
	v := make(url.Values, len(f))
	for _, x := range f {
		v[x.Name] = append(v[x.Name], x.Value)
	}
	return v
}

// maxFormBody caps a form body as http.Request.ParseForm does (10 MB).
const maxFormBody = 10 << 20

// maxFormFields is url.ParseQuery's default limit on a query's fields.
const maxFormFields = 10000

var errFormTooLarge = errors.New("form body too large")

// readForm decodes req's query and url-encoded body (the body as http.Request.ParseForm
// decodes it into PostForm), and refuses what ParseForm refuses: a malformed query
// string or body, a body over 10 MB, a Content-Type that does not parse. A body that is
// not application/x-www-form-urlencoded (JSON, multipart) is not read and has no fields.
func readForm(req *http.Request) (query, body form, err error) {
	if req.URL.RawQuery != "" {
		// ParseForm parses the query too and fails on its errors.
		if query, err = parseForm(nil, req.URL.RawQuery); err != nil {
			return nil, nil, err
		}
	}
	body, err = readBody(req)
	return query, body, err
}

func readBody(req *http.Request) (form, error) {
	ct := req.Header.Get("Content-Type")
	if ct != "application/x-www-form-urlencoded" {
		if ct == "" {
			ct = "application/octet-stream"
		}
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return nil, err
		}
		if mt != "application/x-www-form-urlencoded" {
			return nil, nil
		}
	}
	if req.Body == nil {
		return nil, errors.New("missing form body")
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxFormBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFormBody {
		return nil, errFormTooLarge
	}
	s := string(b)
	return parseForm(make(form, 0, strings.Count(s, "&")+1), s)
}

// parseForm appends the fields of the url-encoded query to f, as url.ParseQuery
// decodes them, and fails where it fails.
func parseForm(f form, query string) (form, error) {
	if strings.Count(query, "&")+1 > maxFormFields {
		return nil, errors.New("too many form fields")
	}
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		if strings.Contains(kv, ";") {
			return nil, errors.New("invalid semicolon separator in query")
		}
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		if v, err = url.QueryUnescape(v); err != nil {
			return nil, err
		}
		f = append(f, twilio.Field{Name: k, Value: v})
	}
	return f, nil
}
