// Package join lets people join a shop's list themselves, and keeps the consent record.
//
// A visitor of the shop's join page (internal/join/page) gives a name, a number and a
// language and ticks the consent box under the shop's disclosure. Request checks the
// pumping limits and, when they allow it, stores a join request (join_requests: not a
// customer) and queues the confirmation text through inbox.Queue, in one transaction.
// Whatever happens, the visitor reads the same "check your phone": nothing tells them
// whether the number is a customer, or was refused.
//
//	page POST ──Request──▶ join_requests (24 h) + confirmation text
//	                              │ the number replies YES (inbound calls Confirm)
//	                              ▼
//	               customer created or updated, opted in (internal/customers)
//	               consent_events: opt_in, method page, the disclosure, the reply
//	               welcome text
//
// A text of the join keyword (Keyword, RequestByText) makes the same request, of method
// keyword. An unconfirmed request expires after RequestTTL and leaves no customer; Purge
// forgets expired requests. The consent record (consent_events) is written by Confirm today; the
// other ways in and out of the list (keywords, imports, the API, the dashboard, STOP) are
// to record theirs through Record. WriteCSV renders a shop's record for a carrier or a
// lawyer.
//
// The pumping limits (limits.go) refuse, in order: the honeypot; a calling code that is
// neither the shop's own nor one it added (AllowedCountries, SetAllowedCountries); a
// number whose shape is a premium, toll-free or non-mobile range (phone.Textable); the
// shop's own number; then the per-address, per-number and per-shop buckets in Redis.
// Every refusal is counted per shop, day and reason in join_refusals (Refusals, for the
// dashboard); the shop's budget spent is marked once an hour in join_budget_spent, and
// that first refusal of the hour texts the owner's confirmed alert number.
//
// The page may also ask what the visitor wants (Wants: the shop's services and people
// from internal/catalog, days, a time range); the request keeps it and the YES saves it
// as the customer's preferences.
package join
