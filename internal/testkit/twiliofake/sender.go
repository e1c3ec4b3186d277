package twiliofake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

// The fake's account: the numbers it holds and can buy (the REST API's
// AvailablePhoneNumbers and IncomingPhoneNumbers), its Messaging Services and their
// numbers (Messaging v1), and the US A2P 10DLC registration: TrustHub v1's customer
// profiles, trust products, end users, supporting documents, entity assignments and
// evaluations, the REST API's Addresses, and Messaging v1's brand registrations and
// Usa2p campaigns. A new brand is PENDING and a new campaign IN_PROGRESS until a test
// decides (SetBrandStatus, SetCampaignStatus), as Twilio's reviewers and TCR do.

// Number is a number the fake's account holds.
type Number struct {
	SID, PhoneNumber, FriendlyName string
	// Bought is set for a number bought through the API (not one AddNumber put there).
	Bought bool
}

// Service is a Messaging Service of the fake's account.
type Service struct {
	SID, FriendlyName, InboundRequestURL, StatusCallback string
	StickySender                                         bool
	// Numbers are the SIDs of the numbers in its sender pool.
	Numbers []string
}

// Bundle is a TrustHub customer profile or trust product.
type Bundle struct {
	SID, Kind, PolicySID, FriendlyName, Email, Status string
	// Assigned are the SIDs of the end users, documents and bundles assigned to it.
	Assigned []string
}

// EndUser is a TrustHub end user or supporting document, or an address.
type EndUser struct {
	SID, Type string
	// Attributes as sent (an end user's or document's JSON; an address's fields).
	Attributes map[string]any
}

// Brand is an A2P brand registration.
type Brand struct {
	SID, CustomerProfileSID, TrustProductSID, BrandType, Status, FailureReason string
}

// Campaign is an A2P campaign (Usa2p) of a Messaging Service.
type Campaign struct {
	SID, ServiceSID, BrandSID, Status, FailureReason string
	// Form is the create request's form: its samples, keywords and messages.
	Form url.Values
}

// account is the fake's state for numbers, services and registrations.
type account struct {
	mu        sync.Mutex
	noNumbers map[string]bool // area codes with nothing to buy
	numbers   []Number
	services  []*Service
	bundles   map[string]*Bundle
	endUsers  map[string]EndUser
	brands    []*Brand
	campaigns []*Campaign
	calls     []Call
}

// Call is one request the fake answered, by Twilio's operationId.
type Call struct {
	Operation string
	At        time.Time
	Status    int
}

func (s *Server) acct() *account {
	s.acctOnce.Do(func() {
		s.account = &account{noNumbers: map[string]bool{}, bundles: map[string]*Bundle{}, endUsers: map[string]EndUser{}}
	})
	return s.account
}

// Calls returns the requests the fake answered for the numbers, services and
// registration operations, in order (Messages creates are counted by Attempts).
func (s *Server) Calls() []Call {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// CallCount is how many requests the operation (an operationId such as
// "CreateIncomingPhoneNumber") got.
func (s *Server) CallCount(operation string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Operation == operation {
			n++
		}
	}
	return n
}

// NoNumbersIn makes AvailablePhoneNumbers find nothing in the US area code. Elsewhere it
// offers one number, +1<area code>55501<NN>.
func (s *Server) NoNumbersIn(areaCode string) {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.noNumbers[areaCode] = true
}

// AddNumber puts a number in the account, as one bought in the console, and returns
// its SID.
func (s *Server) AddNumber(number string) string {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	n := Number{SID: "PN" + randomHex(16), PhoneNumber: number, FriendlyName: number}
	a.numbers = append(a.numbers, n)
	return n.SID
}

// Numbers returns the account's numbers.
func (s *Server) Numbers() []Number {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.numbers)
}

// Services returns the account's Messaging Services.
func (s *Server) Services() []Service {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Service, len(a.services))
	for i, sv := range a.services {
		out[i] = *sv
		out[i].Numbers = slices.Clone(sv.Numbers)
	}
	return out
}

// Bundles returns the customer profiles and trust products.
func (s *Server) Bundles() []Bundle {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Bundle
	for _, b := range a.bundles {
		c := *b
		c.Assigned = slices.Clone(b.Assigned)
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y Bundle) int { return strings.Compare(x.SID, y.SID) })
	return out
}

// EndUser returns an end user, supporting document or address by SID.
func (s *Server) EndUser(sid string) (EndUser, bool) {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.endUsers[sid]
	return u, ok
}

// Brands returns the brand registrations.
func (s *Server) Brands() []Brand {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Brand, len(a.brands))
	for i, b := range a.brands {
		out[i] = *b
	}
	return out
}

// Campaigns returns the campaigns, deleted ones left out.
func (s *Server) Campaigns() []Campaign {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Campaign, len(a.campaigns))
	for i, c := range a.campaigns {
		out[i] = *c
	}
	return out
}

// SetBrandStatus sets a brand's status (APPROVED, FAILED, ...) and, for FAILED, the
// reason Twilio gives.
func (s *Server) SetBrandStatus(sid, status, reason string) {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.brands {
		if b.SID == sid {
			b.Status, b.FailureReason = status, reason
		}
	}
}

// SetCampaignStatus sets a campaign's status (VERIFIED, FAILED, ...) and, for FAILED,
// the reason Twilio gives in its errors.
func (s *Server) SetCampaignStatus(sid, status, reason string) {
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.campaigns {
		if c.SID == sid {
			c.Status, c.FailureReason = status, reason
		}
	}
}

// form parses the call's form body; a request that broke the contract gets refuse's
// answer instead (ok false).
func form(c *call) (url.Values, answer, bool) {
	f, err := url.ParseQuery(string(c.body))
	if err != nil {
		return nil, errorAnswer(http.StatusBadRequest, 20001, "Could not parse the request body"), false
	}
	if len(c.violations) > 0 {
		return nil, refuse(c), false
	}
	return f, answer{}, true
}

func (a *account) record(c *call) {
	a.calls = append(a.calls, Call{Operation: c.match.Operation, At: time.Now()})
}

const (
	restBase      = "https://api.twilio.com"
	messagingBase = "https://messaging.twilio.com"
	trusthubBase  = "https://trusthub.twilio.com"
)

func isoNow() string { return time.Now().UTC().Format(time.RFC3339) }

func rfc2822Now() string { return time.Now().UTC().Format(time.RFC1123Z) }

// page2010 is the REST API's list envelope.
func page2010(path, key string, items []any) map[string]any {
	uri := restBase + path + "?PageSize=50&Page=0"
	return map[string]any{key: items, "end": max(0, len(items)-1), "first_page_uri": uri, "next_page_uri": nil,
		"page": 0, "page_size": 50, "previous_page_uri": nil, "start": 0, "uri": uri}
}

// pageV1 is Messaging's and TrustHub's list envelope.
func pageV1(base, path, key string, items []any) map[string]any {
	uri := base + path + "?PageSize=50&Page=0"
	return map[string]any{key: items, "meta": map[string]any{"first_page_url": uri, "key": key, "next_page_url": nil,
		"page": 0, "page_size": 50, "previous_page_url": nil, "url": uri}}
}

// --- numbers ---

func (s *Server) listAvailableLocal(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	area := c.r.URL.Query().Get("AreaCode")
	country := c.match.PathParams["CountryCode"]
	items := []any{}
	if country == "US" && !a.noNumbers[area] {
		code := area
		if code == "" {
			code = "415"
		}
		n := fmt.Sprintf("+1%s55501%02d", code, len(a.numbers)%100)
		items = append(items, map[string]any{"friendly_name": n, "phone_number": n, "iso_country": "US",
			"region": "CA", "postal_code": nil, "lata": nil, "locality": nil, "rate_center": nil, "latitude": nil,
			"longitude": nil, "address_requirements": "none", "beta": false,
			"capabilities": map[string]any{"sms": true, "mms": true, "voice": true, "fax": false}})
	}
	return answer{status: http.StatusOK, body: page2010(c.r.URL.Path, "available_phone_numbers", items)}
}

func (s *Server) numberJSON(n Number) map[string]any {
	now := rfc2822Now()
	uri := "/2010-04-01/Accounts/" + s.sid + "/IncomingPhoneNumbers/" + n.SID + ".json"
	return map[string]any{"sid": n.SID, "account_sid": s.sid, "phone_number": n.PhoneNumber, "friendly_name": n.FriendlyName,
		"api_version": "2010-04-01", "date_created": now, "date_updated": now, "origin": "twilio", "status": "in-use",
		"capabilities": map[string]any{"sms": true, "mms": true, "voice": true, "fax": false}, "uri": uri,
		"sms_method": "POST", "sms_url": nil, "status_callback": nil, "beta": false}
}

func (s *Server) listIncomingNumbers(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	q := c.r.URL.Query()
	items := []any{}
	for _, n := range a.numbers {
		if v := q.Get("PhoneNumber"); v != "" && v != n.PhoneNumber {
			continue
		}
		if v := q.Get("FriendlyName"); v != "" && v != n.FriendlyName {
			continue
		}
		items = append(items, s.numberJSON(n))
	}
	return answer{status: http.StatusOK, body: page2010(c.r.URL.Path, "incoming_phone_numbers", items)}
}

func (s *Server) createIncomingNumber(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	num := f.Get("PhoneNumber")
	if num == "" || !phone.Valid(num) {
		return errorAnswer(http.StatusBadRequest, 21421, "PhoneNumber is invalid")
	}
	for _, n := range a.numbers {
		if n.PhoneNumber == num {
			return errorAnswer(http.StatusBadRequest, 21422, "PhoneNumber is not available")
		}
	}
	n := Number{SID: "PN" + randomHex(16), PhoneNumber: num, FriendlyName: f.Get("FriendlyName"), Bought: true}
	if n.FriendlyName == "" {
		n.FriendlyName = num
	}
	a.numbers = append(a.numbers, n)
	return answer{status: http.StatusCreated, body: s.numberJSON(n)}
}

// --- messaging services ---

func (s *Server) serviceJSON(sv *Service) map[string]any {
	now := isoNow()
	url := messagingBase + "/v1/Services/" + sv.SID
	return map[string]any{"sid": sv.SID, "account_sid": s.sid, "friendly_name": sv.FriendlyName,
		"date_created": now, "date_updated": now, "inbound_request_url": nullable(sv.InboundRequestURL),
		"inbound_method": "POST", "fallback_url": nil, "fallback_method": "POST", "status_callback": nullable(sv.StatusCallback),
		"sticky_sender": sv.StickySender, "mms_converter": true, "smart_encoding": true, "scan_message_content": "inherit",
		"fallback_to_long_code": false, "area_code_geomatch": true, "synchronous_validation": false, "validity_period": 36000,
		"url": url, "links": map[string]any{"phone_numbers": url + "/PhoneNumbers", "us_app_to_person": url + "/Compliance/Usa2p"},
		"usecase": "undeclared", "us_app_to_person_registered": false, "use_inbound_webhook_on_number": false}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) createService(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	sv := &Service{SID: "MG" + randomHex(16), FriendlyName: f.Get("FriendlyName"),
		InboundRequestURL: f.Get("InboundRequestUrl"), StatusCallback: f.Get("StatusCallback"),
		StickySender: f.Get("StickySender") != "false"}
	a.services = append(a.services, sv)
	return answer{status: http.StatusCreated, body: s.serviceJSON(sv)}
}

func (s *Server) listServices(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	items := []any{}
	for _, sv := range a.services {
		items = append(items, s.serviceJSON(sv))
	}
	return answer{status: http.StatusOK, body: pageV1(messagingBase, c.r.URL.Path, "services", items)}
}

func (a *account) service(sid string) *Service {
	for _, sv := range a.services {
		if sv.SID == sid {
			return sv
		}
	}
	return nil
}

// serviceNumber is the first number of the service's pool; "" for none (or an unknown
// service, which the fake lets pass as before).
func (a *account) serviceNumber(serviceSID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	sv := a.service(serviceSID)
	if sv == nil || len(sv.Numbers) == 0 {
		return ""
	}
	for _, n := range a.numbers {
		if n.SID == sv.Numbers[0] {
			return n.PhoneNumber
		}
	}
	return ""
}

func (s *Server) serviceNumberJSON(serviceSID string, n Number) map[string]any {
	now := isoNow()
	return map[string]any{"sid": n.SID, "account_sid": s.sid, "service_sid": serviceSID, "date_created": now,
		"date_updated": now, "phone_number": n.PhoneNumber, "country_code": "US", "capabilities": []any{"SMS", "MMS"},
		"url": messagingBase + "/v1/Services/" + serviceSID + "/PhoneNumbers/" + n.SID}
}

func (s *Server) createServiceNumber(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	sv := a.service(c.match.PathParams["ServiceSid"])
	if sv == nil {
		return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
	}
	sid := f.Get("PhoneNumberSid")
	i := slices.IndexFunc(a.numbers, func(n Number) bool { return n.SID == sid })
	if i < 0 {
		return errorAnswer(http.StatusBadRequest, 21710, "Phone Number SID is not valid")
	}
	for _, other := range a.services {
		if slices.Contains(other.Numbers, sid) {
			return errorAnswer(http.StatusConflict, 21712, "Phone Number or Short Code is already in the Messaging Service")
		}
	}
	sv.Numbers = append(sv.Numbers, sid)
	return answer{status: http.StatusCreated, body: s.serviceNumberJSON(sv.SID, a.numbers[i])}
}

func (s *Server) listServiceNumbers(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	sv := a.service(c.match.PathParams["ServiceSid"])
	if sv == nil {
		return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
	}
	items := []any{}
	for _, sid := range sv.Numbers {
		for _, n := range a.numbers {
			if n.SID == sid {
				items = append(items, s.serviceNumberJSON(sv.SID, n))
			}
		}
	}
	return answer{status: http.StatusOK, body: pageV1(messagingBase, c.r.URL.Path, "phone_numbers", items)}
}

// --- TrustHub ---

func (s *Server) bundleJSON(b *Bundle) map[string]any {
	now := isoNow()
	plural := "CustomerProfiles"
	if b.Kind == "trust_product" {
		plural = "TrustProducts"
	}
	url := trusthubBase + "/v1/" + plural + "/" + b.SID
	return map[string]any{"sid": b.SID, "account_sid": s.sid, "policy_sid": b.PolicySID, "friendly_name": b.FriendlyName,
		"status": b.Status, "email": b.Email, "date_created": now, "date_updated": now, "url": url,
		"links":  map[string]any{"entity_assignments": url + "/EntityAssignments", "evaluations": url + "/Evaluations"},
		"errors": []any{}}
}

func createBundle(kind string) func(*Server, *call) answer {
	return func(s *Server, c *call) answer {
		f, refused, ok := form(c)
		if !ok {
			return refused
		}
		a := s.acct()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.record(c)
		b := &Bundle{SID: "BU" + randomHex(16), Kind: kind, PolicySID: f.Get("PolicySid"), FriendlyName: f.Get("FriendlyName"),
			Email: f.Get("Email"), Status: "draft"}
		a.bundles[b.SID] = b
		return answer{status: http.StatusCreated, body: s.bundleJSON(b)}
	}
}

func updateBundle(kind string) func(*Server, *call) answer {
	return func(s *Server, c *call) answer {
		f, refused, ok := form(c)
		if !ok {
			return refused
		}
		a := s.acct()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.record(c)
		b := a.bundles[c.match.PathParams["Sid"]]
		if b == nil || b.Kind != kind {
			return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
		}
		if st := f.Get("Status"); st != "" {
			b.Status = st
		}
		return answer{status: http.StatusOK, body: s.bundleJSON(b)}
	}
}

func attributes(f url.Values) (map[string]any, bool) {
	attrs := map[string]any{}
	if v := f.Get("Attributes"); v != "" {
		if err := json.Unmarshal([]byte(v), &attrs); err != nil {
			return nil, false
		}
	}
	return attrs, true
}

func (s *Server) createEndUser(c *call) answer {
	return s.createTrustItem(c, "IT", func(sid string) map[string]any {
		return map[string]any{"url": trusthubBase + "/v1/EndUsers/" + sid}
	})
}

func (s *Server) createDocument(c *call) answer {
	return s.createTrustItem(c, "RD", func(sid string) map[string]any {
		return map[string]any{"mime_type": "application/json", "status": "DRAFT", "url": trusthubBase + "/v1/SupportingDocuments/" + sid}
	})
}

// createTrustItem makes a TrustHub end user or supporting document (its SID begins with
// prefix): a type and JSON attributes, answered with the fields both share and those
// extra gives.
func (s *Server) createTrustItem(c *call, prefix string, extra func(sid string) map[string]any) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	attrs, ok := attributes(f)
	if !ok {
		return errorAnswer(http.StatusBadRequest, 20001, "Attributes must be a JSON object")
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	u := EndUser{SID: prefix + randomHex(16), Type: f.Get("Type"), Attributes: attrs}
	a.endUsers[u.SID] = u
	now := isoNow()
	body := map[string]any{"sid": u.SID, "account_sid": s.sid, "friendly_name": f.Get("FriendlyName"), "type": u.Type,
		"attributes": attrs, "date_created": now, "date_updated": now}
	for k, v := range extra(u.SID) {
		body[k] = v
	}
	return answer{status: http.StatusCreated, body: body}
}

func (s *Server) createAddress(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	sid := "AD" + randomHex(16)
	attrs := map[string]any{}
	for _, k := range []string{"CustomerName", "Street", "City", "Region", "PostalCode", "IsoCountry"} {
		attrs[k] = f.Get(k)
	}
	a.endUsers[sid] = EndUser{SID: sid, Type: "address", Attributes: attrs}
	now := rfc2822Now()
	return answer{status: http.StatusCreated, body: map[string]any{"sid": sid, "account_sid": s.sid,
		"customer_name": f.Get("CustomerName"), "street": f.Get("Street"), "city": f.Get("City"), "region": f.Get("Region"),
		"postal_code": f.Get("PostalCode"), "iso_country": f.Get("IsoCountry"), "friendly_name": nil,
		"date_created": now, "date_updated": now, "emergency_enabled": false, "validated": false, "verified": false,
		"street_secondary": nil, "uri": "/2010-04-01/Accounts/" + s.sid + "/Addresses/" + sid + ".json"}}
}

func createAssignment(kind, param string) func(*Server, *call) answer {
	return func(s *Server, c *call) answer {
		f, refused, ok := form(c)
		if !ok {
			return refused
		}
		a := s.acct()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.record(c)
		b := a.bundles[c.match.PathParams[param]]
		if b == nil || b.Kind != kind {
			return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
		}
		obj := f.Get("ObjectSid")
		if _, isUser := a.endUsers[obj]; !isUser && a.bundles[obj] == nil && !strings.HasPrefix(obj, "BU") {
			return errorAnswer(http.StatusBadRequest, 22216, "Object SID "+obj+" was not found")
		}
		if slices.Contains(b.Assigned, obj) {
			return errorAnswer(http.StatusConflict, 22217, "Object SID "+obj+" is already assigned")
		}
		b.Assigned = append(b.Assigned, obj)
		sid := "BV" + randomHex(16)
		plural, field := "CustomerProfiles", "customer_profile_sid"
		if kind == "trust_product" {
			plural, field = "TrustProducts", "trust_product_sid"
		}
		return answer{status: http.StatusCreated, body: map[string]any{"sid": sid, field: b.SID, "account_sid": s.sid,
			"object_sid": obj, "date_created": isoNow(), "url": trusthubBase + "/v1/" + plural + "/" + b.SID + "/EntityAssignments/" + sid}}
	}
}

// createEvaluation finds a bundle compliant when it holds an end user (IT…) and, for a
// customer profile, a supporting document (RD…) too.
func createEvaluation(kind, param string) func(*Server, *call) answer {
	return func(s *Server, c *call) answer {
		f, refused, ok := form(c)
		if !ok {
			return refused
		}
		a := s.acct()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.record(c)
		b := a.bundles[c.match.PathParams[param]]
		if b == nil || b.Kind != kind {
			return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
		}
		has := func(prefix string) bool {
			return slices.ContainsFunc(b.Assigned, func(s string) bool { return strings.HasPrefix(s, prefix) })
		}
		results := []any{
			map[string]any{"friendly_name": "Business Information", "passed": has("IT"), "object_type": "end_user"},
		}
		compliant := has("IT")
		if kind == "customer_profile" {
			results = append(results, map[string]any{"friendly_name": "Business Address", "passed": has("RD"), "object_type": "supporting_document"})
			compliant = compliant && has("RD")
		}
		status := "noncompliant"
		if compliant {
			status = "compliant"
		}
		sid := "EL" + randomHex(16)
		plural, field := "CustomerProfiles", "customer_profile_sid"
		if kind == "trust_product" {
			plural, field = "TrustProducts", "trust_product_sid"
		}
		return answer{status: http.StatusCreated, body: map[string]any{"sid": sid, "account_sid": s.sid,
			"policy_sid": f.Get("PolicySid"), field: b.SID, "status": status, "results": results, "date_created": isoNow(),
			"url": trusthubBase + "/v1/" + plural + "/" + b.SID + "/Evaluations/" + sid}}
	}
}

// --- brands and campaigns ---

func (s *Server) brandJSON(b *Brand) map[string]any {
	now := isoNow()
	url := messagingBase + "/v1/a2p/BrandRegistrations/" + b.SID
	out := map[string]any{"sid": b.SID, "account_sid": s.sid, "customer_profile_bundle_sid": b.CustomerProfileSID,
		"a2p_profile_bundle_sid": b.TrustProductSID, "date_created": now, "date_updated": now, "brand_type": b.BrandType,
		"status": b.Status, "tcr_id": nil, "failure_reason": nullable(b.FailureReason), "errors": []any{}, "url": url,
		"brand_score": nil, "brand_feedback": nil, "identity_status": "UNVERIFIED", "russell_3000": false, "government_entity": false,
		"tax_exempt_status": nil, "skip_automatic_sec_vet": false, "mock": false,
		"links": map[string]any{"brand_vettings": url + "/Vettings", "brand_registration_otps": url + "/SmsOtp"}}
	if b.Status == "APPROVED" {
		out["tcr_id"] = "B" + strings.ToUpper(b.SID[2:8])
		out["identity_status"] = "VERIFIED"
	}
	return out
}

func (s *Server) createBrand(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	profile, product := a.bundles[f.Get("CustomerProfileBundleSid")], a.bundles[f.Get("A2PProfileBundleSid")]
	if profile == nil || product == nil || profile.Kind != "customer_profile" || product.Kind != "trust_product" {
		return errorAnswer(http.StatusBadRequest, 21709, "Customer profile or A2P profile bundle not found")
	}
	b := &Brand{SID: "BN" + randomHex(16), CustomerProfileSID: profile.SID, TrustProductSID: product.SID,
		BrandType: cmpOr(f.Get("BrandType"), "STANDARD"), Status: "PENDING"}
	a.brands = append(a.brands, b)
	return answer{status: http.StatusCreated, body: s.brandJSON(b)}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) fetchBrand(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	for _, b := range a.brands {
		if b.SID == c.match.PathParams["Sid"] {
			return answer{status: http.StatusOK, body: s.brandJSON(b)}
		}
	}
	return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
}

func (s *Server) listBrands(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	items := []any{}
	for _, b := range a.brands {
		items = append(items, s.brandJSON(b))
	}
	return answer{status: http.StatusOK, body: pageV1(messagingBase, c.r.URL.Path, "data", items)}
}

func (s *Server) campaignJSON(cp *Campaign) map[string]any {
	now := isoNow()
	f := cp.Form
	errs := []any{}
	if cp.FailureReason != "" {
		errs = append(errs, map[string]any{"error_code": 30896, "description": cp.FailureReason})
	}
	bools := func(k string) bool { return f.Get(k) == "true" }
	arr := func(k string) any {
		if vs := f[k]; len(vs) > 0 {
			return slices.Clone(vs)
		}
		return nil
	}
	var id any
	if cp.Status == "VERIFIED" {
		id = "C" + strings.ToUpper(cp.SID[2:8])
	}
	return map[string]any{"sid": cp.SID, "account_sid": s.sid, "brand_registration_sid": cp.BrandSID,
		"messaging_service_sid": cp.ServiceSID, "description": f.Get("Description"), "message_samples": arr("MessageSamples"),
		"us_app_to_person_usecase": f.Get("UsAppToPersonUsecase"), "has_embedded_links": bools("HasEmbeddedLinks"),
		"has_embedded_phone": bools("HasEmbeddedPhone"), "subscriber_opt_in": bools("SubscriberOptIn"), "age_gated": false,
		"direct_lending": false, "campaign_status": cp.Status, "campaign_id": id, "is_externally_registered": false,
		"rate_limits": map[string]any{}, "message_flow": f.Get("MessageFlow"), "opt_in_message": nullable(f.Get("OptInMessage")),
		"opt_out_message": nullable(f.Get("OptOutMessage")), "help_message": nullable(f.Get("HelpMessage")),
		"opt_in_keywords": arr("OptInKeywords"), "opt_out_keywords": arr("OptOutKeywords"), "help_keywords": arr("HelpKeywords"),
		"date_created": now, "date_updated": now, "url": messagingBase + "/v1/Services/" + cp.ServiceSID + "/Compliance/Usa2p/" + cp.SID,
		"mock": false, "errors": errs}
}

func (s *Server) createCampaign(c *call) answer {
	f, refused, ok := form(c)
	if !ok {
		return refused
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	service := c.match.PathParams["MessagingServiceSid"]
	if a.service(service) == nil {
		return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
	}
	var brand *Brand
	for _, b := range a.brands {
		if b.SID == f.Get("BrandRegistrationSid") {
			brand = b
		}
	}
	switch {
	case brand == nil:
		return errorAnswer(http.StatusBadRequest, 21709, "Brand registration not found")
	case brand.Status != "APPROVED":
		return errorAnswer(http.StatusBadRequest, 21710, "Brand registration is not approved")
	}
	for _, cp := range a.campaigns {
		if cp.ServiceSID == service {
			return errorAnswer(http.StatusConflict, 21711, "The Messaging Service already has a campaign")
		}
	}
	if n := len(f["MessageSamples"]); n < 2 || n > 5 {
		return errorAnswer(http.StatusBadRequest, 21713, "MessageSamples must hold 2 to 5 samples, not "+strconv.Itoa(n))
	}
	cp := &Campaign{SID: "QE" + randomHex(16), ServiceSID: service, BrandSID: brand.SID, Status: "IN_PROGRESS", Form: f}
	a.campaigns = append(a.campaigns, cp)
	return answer{status: http.StatusCreated, body: s.campaignJSON(cp)}
}

func (s *Server) fetchCampaign(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	for _, cp := range a.campaigns {
		if cp.SID == c.match.PathParams["Sid"] && cp.ServiceSID == c.match.PathParams["MessagingServiceSid"] {
			return answer{status: http.StatusOK, body: s.campaignJSON(cp)}
		}
	}
	return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
}

func (s *Server) listCampaigns(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	items := []any{}
	for _, cp := range a.campaigns {
		if cp.ServiceSID == c.match.PathParams["MessagingServiceSid"] {
			items = append(items, s.campaignJSON(cp))
		}
	}
	return answer{status: http.StatusOK, body: pageV1(messagingBase, c.r.URL.Path, "compliance", items)}
}

func (s *Server) deleteCampaign(c *call) answer {
	if len(c.violations) > 0 {
		return refuse(c)
	}
	a := s.acct()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.record(c)
	i := slices.IndexFunc(a.campaigns, func(cp *Campaign) bool {
		return cp.SID == c.match.PathParams["Sid"] && cp.ServiceSID == c.match.PathParams["MessagingServiceSid"]
	})
	if i < 0 {
		return errorAnswer(http.StatusNotFound, 20404, "The requested resource was not found")
	}
	a.campaigns = slices.Delete(a.campaigns, i, i+1)
	return answer{status: http.StatusNoContent}
}
