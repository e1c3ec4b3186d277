package book_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
)

// Local fakes of the two vendors' APIs, held to the shapes of their references: cal.com
// API v2 (Authorization: Bearer cal_…, cal-api-version 2024-08-13, {status, data} or
// {status: "error", error: {code, message}}; POST /v2/bookings/{uid}/reschedule makes a
// new booking and cancels the old one, rescheduledToUid naming the new; a cancelled
// booking is not rescheduled again: 400) and Square's Bookings API (Authorization:
// Bearer, Square-Version; {booking} or {errors: [{category, code, detail}]}; PUT
// /v2/bookings/{id} with {idempotency_key, booking: {version, start_at}}: a version
// other than the booking's is 409 VERSION_MISMATCH; the same idempotency key answers
// the first answer again). Each keeps what the vendor would send as its webhook for a
// change it made (Echoes), for the test to deliver signed as the vendor signs.

// fakeCalcom is cal.com's API v2 for one account.
type fakeCalcom struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	bookings map[string]*calBooking
	// Reschedules counts the reschedules made (not the requests).
	Reschedules int
	Requests    int
	// Fail answers the next reschedule requests with this status before doing anything
	// (0: none), FailTimes times; Lose does the next reschedule and then answers 502, as
	// if the answer were lost on its way.
	Fail, FailTimes int
	Lose            bool
	// Echoes are the BOOKING_RESCHEDULED bodies cal.com would post.
	Echoes [][]byte
	// BeforeAnswer runs with the webhook body before the reschedule is answered (cal.com
	// posting its webhook before our request sees its answer).
	BeforeAnswer func(body []byte)
}

type calBooking struct {
	ID                 int    `json:"id"`
	UID                string `json:"uid"`
	Title              string `json:"title"`
	Status             string `json:"status"`
	Start              string `json:"start"`
	End                string `json:"end"`
	Duration           int    `json:"duration"`
	RescheduledFromUID string `json:"rescheduledFromUid,omitempty"`
	RescheduledToUID   string `json:"rescheduledToUid,omitempty"`
	phone              string
}

func newFakeCalcom(t *testing.T, key string) *fakeCalcom {
	f := &fakeCalcom{key: key, bookings: map[string]*calBooking{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Add adds an accepted booking uid at start, length minutes, of the attendee with phone.
func (f *fakeCalcom) Add(uid string, start time.Time, minutes int, phone string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bookings[uid] = &calBooking{ID: len(f.bookings) + 1000, UID: uid, Title: "Cut", Status: "accepted",
		Start: start.UTC().Format(time.RFC3339), End: start.Add(time.Duration(minutes) * time.Minute).UTC().Format(time.RFC3339),
		Duration: minutes, phone: phone}
}

func (f *fakeCalcom) Booking(uid string) calBooking {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.bookings[uid]
}

func calError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "timestamp": time.Now().UTC().Format(time.RFC3339),
		"error": map[string]any{"code": code, "message": msg}})
}

func (f *fakeCalcom) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.Requests++
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+f.key {
		calError(w, http.StatusUnauthorized, "UnauthorizedException", "Invalid API Key")
		return
	}
	if r.Header.Get(calcom.VersionHeader) != calcom.APIVersion {
		calError(w, http.StatusBadRequest, "BadRequestException", "cal-api-version header missing or unknown")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // v2 bookings {uid} [reschedule]
	if len(parts) < 3 || parts[0] != "v2" || parts[1] != "bookings" {
		calError(w, http.StatusNotFound, "NotFoundException", "Cannot "+r.Method+" "+r.URL.Path)
		return
	}
	f.mu.Lock()
	b, ok := f.bookings[parts[2]]
	f.mu.Unlock()
	switch {
	case len(parts) == 3 && r.Method == http.MethodGet:
		if !ok {
			calError(w, http.StatusNotFound, "NotFoundException", "Booking with uid="+parts[2]+" was not found in the database")
			return
		}
		f.mu.Lock()
		out := *b
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": out})
	case len(parts) == 4 && parts[3] == "reschedule" && r.Method == http.MethodPost:
		var in struct {
			Start              string `json:"start"`
			ReschedulingReason string `json:"reschedulingReason"`
		}
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&in) != nil {
			calError(w, http.StatusBadRequest, "BadRequestException", "body must be JSON")
			return
		}
		start, err := time.Parse(time.RFC3339Nano, in.Start)
		if err != nil {
			calError(w, http.StatusBadRequest, "BadRequestException", "start must be a valid ISO 8601 date")
			return
		}
		f.mu.Lock()
		if f.FailTimes > 0 {
			f.FailTimes--
			f.mu.Unlock()
			calError(w, f.Fail, "InternalServerErrorException", "Something went wrong")
			return
		}
		if !ok {
			f.mu.Unlock()
			calError(w, http.StatusNotFound, "NotFoundException", "Booking with uid="+parts[2]+" was not found in the database")
			return
		}
		if b.Status != "accepted" {
			msg := "Can't reschedule booking with status " + b.Status
			if b.RescheduledToUID != "" {
				msg += "; it was rescheduled to booking uid=" + b.RescheduledToUID
			}
			f.mu.Unlock()
			calError(w, http.StatusBadRequest, "BadRequestException", msg)
			return
		}
		nb := &calBooking{ID: len(f.bookings) + 1000, UID: strings.ReplaceAll(uuid.NewString(), "-", "")[:22], Title: b.Title,
			Status: "accepted", Start: start.UTC().Format(time.RFC3339), End: start.Add(time.Duration(b.Duration) * time.Minute).UTC().Format(time.RFC3339),
			Duration: b.Duration, RescheduledFromUID: b.UID, phone: b.phone}
		b.Status, b.RescheduledToUID = "cancelled", nb.UID
		f.bookings[nb.UID] = nb
		f.Reschedules++
		echo := calEcho(*b, *nb)
		f.Echoes = append(f.Echoes, echo)
		lose, before := f.Lose, f.BeforeAnswer
		f.Lose = false
		out := *nb
		f.mu.Unlock()
		if before != nil {
			before(echo)
		}
		if lose {
			calError(w, http.StatusBadGateway, "BadGateway", "upstream connection reset")
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"status": "success", "data": out})
	default:
		calError(w, http.StatusNotFound, "NotFoundException", "Cannot "+r.Method+" "+r.URL.Path)
	}
}

// calEcho is the BOOKING_RESCHEDULED delivery cal.com sends for old rescheduled to nb
// (the shape of sendPayload.ts: uid the new booking, rescheduleUid/StartTime the old).
func calEcho(old, nb calBooking) []byte {
	phone := nb.phone
	body, _ := json.Marshal(map[string]any{
		"triggerEvent": "BOOKING_RESCHEDULED",
		"createdAt":    time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"payload": map[string]any{
			"type": "cut", "title": "Cut between Dana and the customer", "eventTitle": "Cut", "length": nb.Duration,
			"startTime": nb.Start, "endTime": nb.End, "uid": nb.UID, "bookingId": nb.ID, "status": "ACCEPTED",
			"organizer":     map[string]any{"id": 7, "name": "Dana", "email": "dana@example-barbers.test", "timeZone": "UTC"},
			"attendees":     []any{map[string]any{"name": "Kim", "email": "kim@example.test", "timeZone": "UTC", "phoneNumber": phone}},
			"responses":     map[string]any{"name": map[string]any{"label": "your_name", "value": "Kim"}},
			"rescheduleUid": old.UID, "rescheduleId": old.ID, "rescheduleStartTime": old.Start, "rescheduleEndTime": old.End,
			"rescheduledBy": "dana@example-barbers.test", "smsReminderNumber": nil,
		},
	})
	return body
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeSquare is Square's Bookings API for one seller.
type fakeSquare struct {
	*httptest.Server
	token string

	mu       sync.Mutex
	bookings map[string]*sqBooking
	answers  map[string][]byte // by idempotency key
	// Updates counts the updates made; Conflicts the 409 VERSION_MISMATCH answered.
	Updates, Conflicts int
	// Bump has someone else change the booking (a new version) just before the next
	// update is read, Bump times.
	Bump int
	// Echoes are the booking.updated events Square would post.
	Echoes [][]byte
	// BeforeAnswer runs with the webhook body before the update is answered.
	BeforeAnswer func(body []byte)
	// Unavailable answers the next reads 503, Unavailable times, after running
	// BeforeUnavailable (if set) with the booking read.
	Unavailable       int
	BeforeUnavailable func(b *sqBooking)
}

type sqBooking struct {
	ID         string      `json:"id"`
	Version    int64       `json:"version"`
	Status     string      `json:"status"`
	CreatedAt  string      `json:"created_at"`
	UpdatedAt  string      `json:"updated_at"`
	StartAt    string      `json:"start_at"`
	LocationID string      `json:"location_id"`
	CustomerID string      `json:"customer_id"`
	SellerNote string      `json:"seller_note"`
	Segments   []sqSegment `json:"appointment_segments"`
}

type sqSegment struct {
	DurationMinutes     int    `json:"duration_minutes"`
	ServiceVariationID  string `json:"service_variation_id"`
	TeamMemberID        string `json:"team_member_id"`
	ServiceVariationVer int64  `json:"service_variation_version"`
	IntermissionMinutes int    `json:"intermission_minutes"`
}

func newFakeSquare(t *testing.T, token string) *fakeSquare {
	f := &fakeSquare{token: token, bookings: map[string]*sqBooking{}, answers: map[string][]byte{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Add adds an accepted booking id at start of minutes, at version.
func (f *fakeSquare) Add(id string, start time.Time, minutes int, version int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC3339)
	f.bookings[id] = &sqBooking{ID: id, Version: version, Status: "ACCEPTED", CreatedAt: now, UpdatedAt: now,
		StartAt: start.UTC().Format(time.RFC3339), LocationID: "LRQ4T8GZ2K1MX", CustomerID: "8NQK4JG2D1VPX6C3ZR0T5WY7AM",
		Segments: []sqSegment{{DurationMinutes: minutes, ServiceVariationID: "QW7R2T4Y6U8I0OPASDFGHJKL", TeamMemberID: "TMq3Zx7Vb2Nm8Lk", ServiceVariationVer: 1764400000000}}}
}

func (f *fakeSquare) Booking(id string) sqBooking {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.bookings[id]
}

func sqError(w http.ResponseWriter, status int, category, code, detail string) {
	writeJSON(w, status, map[string]any{"errors": []any{map[string]any{"category": category, "code": code, "detail": detail}}})
}

func (f *fakeSquare) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		sqError(w, http.StatusUnauthorized, "AUTHENTICATION_ERROR", "UNAUTHORIZED", "This request could not be authorized.")
		return
	}
	if r.Header.Get(square.VersionHeader) == "" {
		sqError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_SQUARE_VERSION_FORMAT", "Square-Version header missing")
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/v2/bookings/")
	if !ok || id == "" || strings.Contains(id, "/") {
		sqError(w, http.StatusNotFound, "INVALID_REQUEST_ERROR", "NOT_FOUND", "Resource not found.")
		return
	}
	f.mu.Lock()
	b, found := f.bookings[id]
	if !found {
		f.mu.Unlock()
		sqError(w, http.StatusNotFound, "INVALID_REQUEST_ERROR", "NOT_FOUND", "Booking `"+id+"` not found.")
		return
	}
	switch r.Method {
	case http.MethodGet:
		if f.Unavailable > 0 {
			f.Unavailable--
			if f.BeforeUnavailable != nil {
				f.BeforeUnavailable(b)
			}
			f.mu.Unlock()
			sqError(w, http.StatusServiceUnavailable, "API_ERROR", "SERVICE_UNAVAILABLE", "Service unavailable.")
			return
		}
		if f.Bump > 0 {
			// Someone else changes the booking between our read and our update.
			defer func() { f.mu.Lock(); b.Version++; b.SellerNote += "."; f.mu.Unlock() }()
			f.Bump--
		}
		out := *b
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"booking": out, "errors": []any{}})
	case http.MethodPut:
		defer f.mu.Unlock()
		var in struct {
			IdempotencyKey string `json:"idempotency_key"`
			Booking        struct {
				Version *int64 `json:"version"`
				StartAt string `json:"start_at"`
			} `json:"booking"`
		}
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&in) != nil {
			sqError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_BODY", "The request body is not valid JSON.")
			return
		}
		if prev, ok := f.answers[in.IdempotencyKey]; in.IdempotencyKey != "" && ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(prev)
			return
		}
		if in.Booking.Version != nil && *in.Booking.Version != b.Version {
			f.Conflicts++
			sqError(w, http.StatusConflict, "INVALID_REQUEST_ERROR", "VERSION_MISMATCH", "Booking version mismatch.")
			return
		}
		start, err := time.Parse(time.RFC3339, in.Booking.StartAt)
		if err != nil {
			sqError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_TIME", "Invalid start_at.")
			return
		}
		b.Version++
		b.StartAt, b.UpdatedAt = start.UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)
		f.Updates++
		out, _ := json.Marshal(map[string]any{"booking": *b, "errors": []any{}})
		f.answers[in.IdempotencyKey] = out
		echo, _ := json.Marshal(map[string]any{"merchant_id": "MLV3ZQ7Q9XD2K", "type": "booking.updated",
			"event_id": uuid.NewString(), "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"data": map[string]any{"type": "booking", "id": b.ID, "object": map[string]any{"booking": *b}}})
		f.Echoes = append(f.Echoes, echo)
		if f.BeforeAnswer != nil {
			f.mu.Unlock()
			f.BeforeAnswer(echo)
			f.mu.Lock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	default:
		f.mu.Unlock()
		sqError(w, http.StatusMethodNotAllowed, "INVALID_REQUEST_ERROR", "METHOD_NOT_ALLOWED", fmt.Sprintf("%s not allowed", r.Method))
	}
}

// count reads one of the fake's counters.
func (f *fakeCalcom) count(n *int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *n
}

func (f *fakeCalcom) echoes() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.Echoes...)
}

// count reads one of the fake's counters.
func (f *fakeSquare) count(n *int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *n
}

func (f *fakeSquare) echoes() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.Echoes...)
}
