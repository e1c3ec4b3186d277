package shopapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireLanguageError: a 422 invalid_language on the field language whose message lists
// the supported codes.
func requireLanguageError(t *testing.T, r resp) {
	t.Helper()
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_language")
	require.Equal(t, "language", r.errFieldName(), r.raw)
	require.Contains(t, r.errMsg(), "en, es, fr", r.raw)
}

// TestShopLanguageAPI: a shop is created in English unless it names another language,
// shows it, and changes it by PATCH; any case is read, lower case is stored; anything
// else is a 422 naming language, and a null (a shop always has a language) too.
func TestShopLanguageAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	create := []struct {
		name string
		lang any // absent when nil and !null
		null bool
		want string
	}{
		{"absent", nil, false, "en"},
		{"null", nil, true, "en"},
		{"spanish", "es", false, "es"},
		{"upper case", "FR", false, "fr"},
		{"spaces", " en ", false, "en"},
	}
	for i, tt := range create {
		t.Run("create "+tt.name, func(t *testing.T) {
			body := validShop("+1555555011" + string(rune('0'+i)))
			if tt.lang != nil || tt.null {
				body["language"] = tt.lang
			}
			r := e.sub(t).do(http.MethodPost, "/api/shops", adminToken, body)
			require.Equal(t, http.StatusCreated, r.status, r.raw)
			require.Equal(t, tt.want, r.body["language"])
			got := e.sub(t).do(http.MethodGet, "/api/shop", r.body["api_key"].(string), nil)
			require.Equal(t, tt.want, got.body["language"], "stored")
		})
	}
	bad := []struct {
		name   string
		lang   any
		status int
	}{
		{"unsupported", "de", http.StatusUnprocessableEntity},
		{"a name, not a code", "Spanish", http.StatusUnprocessableEntity},
		{"a region", "es-MX", http.StatusUnprocessableEntity},
		{"empty", "", http.StatusUnprocessableEntity},
		{"a number", 3, http.StatusBadRequest},
	}
	for _, tt := range bad {
		t.Run("create "+tt.name, func(t *testing.T) {
			body := validShop("+15555550129")
			body["language"] = tt.lang
			r := e.sub(t).do(http.MethodPost, "/api/shops", adminToken, body)
			if tt.status == http.StatusBadRequest {
				requireError(t, r, tt.status, "bad_json")
				require.Equal(t, "language", r.errFieldName())
				return
			}
			requireLanguageError(t, r)
		})
	}
	require.Zero(t, e.queryInt(`SELECT count(*) FROM shops WHERE sms_number = '+15555550129'`), "no shop made")

	_, key := e.shop("+15555550100")
	patch := []struct {
		name   string
		body   any
		status int
		want   string // the language afterwards
	}{
		{"to spanish, any case", map[string]any{"language": "ES"}, http.StatusOK, "es"},
		{"another field: unchanged", map[string]any{"name": "Fade Street"}, http.StatusOK, "es"},
		{"null", map[string]any{"language": nil}, http.StatusUnprocessableEntity, "es"},
		{"unsupported", map[string]any{"language": "it"}, http.StatusUnprocessableEntity, "es"},
		{"empty", map[string]any{"language": ""}, http.StatusUnprocessableEntity, "es"},
		{"a number", map[string]any{"language": 1}, http.StatusBadRequest, "es"},
		{"with a bad field: nothing applied", map[string]any{"language": "fr", "timezone": "Mars/Olympus"}, http.StatusUnprocessableEntity, "es"},
		{"to french", map[string]any{"language": "fr"}, http.StatusOK, "fr"},
	}
	for _, tt := range patch {
		t.Run("patch "+tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPatch, "/api/shop", key, tt.body)
			switch tt.status {
			case http.StatusOK:
				require.Equal(t, http.StatusOK, r.status, r.raw)
				require.Equal(t, tt.want, r.body["language"])
			case http.StatusBadRequest:
				requireError(t, r, tt.status, "bad_json")
				require.Equal(t, "language", r.errFieldName())
			default:
				if tt.body.(map[string]any)["timezone"] != nil {
					requireError(t, r, tt.status, "invalid_timezone")
					break
				}
				requireLanguageError(t, r)
			}
			require.Equal(t, tt.want, e.sub(t).do(http.MethodGet, "/api/shop", key, nil).body["language"], "stored")
		})
	}
}

// TestCustomerLanguageAPI: a customer is in the shop's language (null) unless one is
// given; PATCH sets it, null puts them back in the shop's, absent leaves it; anything
// but a supported code is a 422 naming language and changes nothing.
func TestCustomerLanguageAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	create := []struct {
		name  string
		phone string
		body  map[string]any
		want  any
	}{
		{"absent", "+15555550121", map[string]any{}, nil},
		{"null", "+15555550122", map[string]any{"language": nil}, nil},
		{"spanish", "+15555550123", map[string]any{"language": "es"}, "es"},
		{"any case and spaces", "+15555550124", map[string]any{"language": " Fr "}, "fr"},
	}
	for _, tt := range create {
		t.Run("create "+tt.name, func(t *testing.T) {
			tt.body["phone"] = tt.phone
			r := e.sub(t).do(http.MethodPost, "/api/customers", key, tt.body)
			require.Equal(t, http.StatusCreated, r.status, r.raw)
			require.Contains(t, r.body, "language")
			require.Equal(t, tt.want, r.body["language"])
			got := e.sub(t).do(http.MethodGet, "/api/customers/"+r.body["id"].(string), key, nil)
			require.Equal(t, tt.want, got.body["language"], "stored")
		})
	}
	for _, lang := range []any{"de", "", "english"} {
		r := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550129", "language": lang})
		requireLanguageError(t, r)
	}
	r := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550129", "language": []string{"es"}})
	requireError(t, r, http.StatusBadRequest, "bad_json")
	require.Equal(t, "language", r.errFieldName())
	require.Zero(t, e.queryInt(`SELECT count(*) FROM customers WHERE phone = '+15555550129'`), "no customer made")

	id := e.customer(key, map[string]any{"phone": "+15555550130", "name": "Ana"})
	patch := []struct {
		name   string
		body   any
		status int
		want   any // the language afterwards
	}{
		{"set, any case", map[string]any{"language": "ES"}, http.StatusOK, "es"},
		{"another field: unchanged", map[string]any{"name": "Ana B."}, http.StatusOK, "es"},
		{"unsupported", map[string]any{"language": "nl"}, http.StatusUnprocessableEntity, "es"},
		{"empty", map[string]any{"language": ""}, http.StatusUnprocessableEntity, "es"},
		{"with a bad field: nothing applied", map[string]any{"language": "fr", "priority": 5000}, http.StatusUnprocessableEntity, "es"},
		{"null: the shop's again", map[string]any{"language": nil}, http.StatusOK, nil},
		{"a boolean", map[string]any{"language": true}, http.StatusBadRequest, nil},
		{"french", map[string]any{"language": "fr"}, http.StatusOK, "fr"},
	}
	for _, tt := range patch {
		t.Run("patch "+tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPatch, "/api/customers/"+id, key, tt.body)
			switch tt.status {
			case http.StatusOK:
				require.Equal(t, http.StatusOK, r.status, r.raw)
				require.Equal(t, tt.want, r.body["language"])
			case http.StatusBadRequest:
				requireError(t, r, tt.status, "bad_json")
				require.Equal(t, "language", r.errFieldName())
			default:
				if tt.body.(map[string]any)["priority"] != nil {
					requireError(t, r, tt.status, "invalid_priority")
					break
				}
				requireLanguageError(t, r)
			}
			require.Equal(t, tt.want, e.sub(t).do(http.MethodGet, "/api/customers/"+id, key, nil).body["language"], "stored")
		})
	}

	// The list shows each customer's language, null for the shop's.
	list := e.do(http.MethodGet, "/api/customers?limit=200", key, nil)
	require.Equal(t, http.StatusOK, list.status, list.raw)
	got := map[string]any{}
	for _, c := range list.body["customers"].([]any) {
		c := c.(map[string]any)
		got[c["phone"].(string)] = c["language"]
	}
	require.Equal(t, map[string]any{"+15555550121": nil, "+15555550122": nil, "+15555550123": "es",
		"+15555550124": "fr", "+15555550130": "fr"}, got)

	// A shop's language changes what "the shop's" is, not the customers who have their own.
	require.Equal(t, http.StatusOK, e.do(http.MethodPatch, "/api/shop", key, map[string]any{"language": "es"}).status)
	require.Equal(t, "fr", e.do(http.MethodGet, "/api/customers/"+id, key, nil).body["language"])
}

// TestImportLanguageColumnAPI: the CSV's language column, through the API: a good code
// (any case) is set, an empty cell is the shop's for a new customer and changes nothing
// for an existing one, an unsupported one rejects its line with a reason naming the
// column.
func TestImportLanguageColumnAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	r := e.importCSV(key, "phone,name,language\n+15555550131,Ana,ES\n+15555550132,Ben,\n+15555550133,Cy,klingon\n")
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, 2.0, r.body["created"])
	require.Equal(t, 1.0, r.body["rejected"])
	rows := r.body["rows"].([]any)
	bad := rows[2].(map[string]any)
	require.Equal(t, "rejected", bad["result"])
	require.Equal(t, 4.0, bad["line"])
	require.Contains(t, bad["reason"], "language must be one of en, es, fr")

	lang := func(phone string) any {
		t.Helper()
		list := e.do(http.MethodGet, "/api/customers?q="+phone[1:], key, nil)
		require.Equal(t, http.StatusOK, list.status, list.raw)
		cs := list.body["customers"].([]any)
		require.Len(t, cs, 1, phone)
		return cs[0].(map[string]any)["language"]
	}
	require.Equal(t, "es", lang("+15555550131"))
	require.Nil(t, lang("+15555550132"), "empty: the shop's")

	// Again: an empty cell leaves Ana's Spanish; Ben gets French.
	r = e.importCSV(key, "phone;language\n+15555550131;\n+15555550132;fr\n")
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, 1.0, r.body["unchanged"])
	require.Equal(t, 1.0, r.body["updated"])
	require.Equal(t, "es", lang("+15555550131"))
	require.Equal(t, "fr", lang("+15555550132"))
}
