package stripe

import (
	"bytes"
	"encoding/json"
)

// personalFields are the fields of Stripe's objects that hold what a customer gave at
// checkout or on their card: name, email, phone, address. The server reads none of them,
// and a customer's erasure, which finds a person through their customer row, could not
// find them in a stored event; so they never reach the stored payload.
var personalFields = []string{
	"customer_details", "customer_email", "collected_information", "shipping_details", "shipping",
	"billing_details", "receipt_email",
}

// customerFields are the fields of a Customer object (object "customer") that name the
// person; the endpoints are not subscribed to customer events, but an event of another
// type may carry one expanded.
var customerFields = []string{"name", "email", "phone", "address", "shipping", "description"}

// withoutPersonalData is payload with every personal field left out, wherever it stands
// (data.object, an expanded payment intent, its charges); null ones stay. A payload that
// holds none is returned as it came, byte for byte.
func withoutPersonalData(payload []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber() // amounts and times are kept exactly as sent
	var v any
	if err := dec.Decode(&v); err != nil || !stripPersonal(v) {
		return payload // it decoded once already (signature checked); nothing to leave out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return payload
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// stripPersonal deletes the personal fields in v, recursively, and reports whether it
// deleted any.
func stripPersonal(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		drop := personalFields
		if t["object"] == "customer" {
			drop = append(drop[:len(drop):len(drop)], customerFields...)
		}
		for _, k := range drop {
			// A null field holds nothing of anyone: left as it is.
			if v, ok := t[k]; ok && v != nil {
				delete(t, k)
				changed = true
			}
		}
		for _, c := range t {
			changed = stripPersonal(c) || changed
		}
	case []any:
		for _, c := range t {
			changed = stripPersonal(c) || changed
		}
	}
	return changed
}
