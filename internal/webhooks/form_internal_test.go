package webhooks

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
)

// FuzzReadFormAgreesWithParseForm: readForm refuses exactly what http.Request.ParseForm
// refuses, and otherwise decodes the same fields, first values first.
func FuzzReadFormAgreesWithParseForm(f *testing.F) {
	f.Add("MessageSid=SM1&From=%2B15555550123&To=%2B15555550100&Body=YES+please", "", "application/x-www-form-urlencoded")
	f.Add("a=1&a=2&b&=x&&c=%zz", "for=SM1&outcome=taken", "application/x-www-form-urlencoded; charset=utf-8")
	f.Add("a=1;b=2", "", "application/x-www-form-urlencoded")
	f.Add("a=1", "x=1;y", "application/x-www-form-urlencoded")
	f.Add(`{"a":1}`, "", "application/json")
	f.Add("a=1", "", "")
	f.Add("a=1", "", "text/plain; charset")
	f.Fuzz(func(t *testing.T, body, query, ct string) {
		newReq := func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
			r.URL.RawQuery = query
			if ct != "" {
				r.Header.Set("Content-Type", ct)
			}
			return r
		}
		want := newReq()
		wantErr := want.ParseForm()
		q, got, err := readForm(newReq())
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("body %q query %q type %q: readForm's error %v, ParseForm's %v", body, query, ct, err, wantErr)
		}
		if err != nil {
			return
		}
		if gv := got.values(); len(gv) != len(want.PostForm) {
			t.Fatalf("body %q: fields %q, ParseForm's %q", body, gv, want.PostForm)
		}
		for k, vs := range want.PostForm {
			if got.get(k) != vs[0] {
				t.Fatalf("body %q: %q is %q, ParseForm's %q", body, k, got.get(k), vs[0])
			}
			if !slicesEqual(got.values()[k], vs) {
				t.Fatalf("body %q: %q's values %q, ParseForm's %q", body, k, got.values()[k], vs)
			}
		}
		for k, vs := range want.URL.Query() {
			if q.get(k) != vs[0] {
				t.Fatalf("query %q: %q is %q, url's %q", query, k, q.get(k), vs[0])
			}
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestActionURLIsTheEncodedQuery: ActionURL writes the query url.Values.Encode writes.
func TestActionURLIsTheEncodedQuery(t *testing.T) {
	booking := uuid.MustParse("0195f7a4-7b1c-7cde-8f00-0123456789ab")
	for _, ans := range []inbound.Answer{
		{Outcome: inbound.OutcomeBooked, BookingID: booking, Message: "See you at 3pm & bring cash"},
		{Outcome: inbound.OutcomeBooked, Message: "x"},
		{Outcome: "taken", Message: "Sorry: taken. Next time?", WordsLeft: true},
		{Outcome: "a b+c&d=e", BookingID: booking},
	} {
		for _, overrides := range []string{"", "rc=3&rp=all"} {
			sid := "SM0123 &=+%"
			q := url.Values{"for": {sid}, "outcome": {string(ans.Outcome)}}
			if ans.Outcome == inbound.OutcomeBooked && ans.BookingID != uuid.Nil {
				q.Set("booking", ans.BookingID.String())
			}
			if ans.WordsLeft {
				q.Set("words", ans.Message)
			}
			want := "https://slots.example.test" + TwilioAnsweredPath + "?" + q.Encode()
			if overrides != "" {
				want += "#" + overrides
			}
			if got := ActionURL("https://slots.example.test", overrides, sid, ans); got != want {
				t.Errorf("ActionURL = %q, want %q", got, want)
			}
		}
	}
}

// FuzzAppendEscapedIsEscapeText: appendEscaped writes the bytes xml.EscapeText writes.
func FuzzAppendEscapedIsEscapeText(f *testing.F) {
	for _, s := range []string{"", "It's taken & gone", `<"a">` + "\t\n\r", "\xff\x00héllo\uFFFD\U0001F600", "https://x.test/?a=1&b=2#rc=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		_ = xml.EscapeText(&want, []byte(s))
		if got := appendEscaped([]byte("x"), s); string(got) != "x"+want.String() {
			t.Fatalf("%q: got %q, want %q", s, got[1:], want.String())
		}
	})
}
