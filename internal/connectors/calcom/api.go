package calcom

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// DefaultAPIURL is cal.com's API (CALCOM_API_URL overrides it).
const DefaultAPIURL = "https://api.cal.com"

// APIVersion is the cal-api-version the bookings endpoints are called with: without
// it cal.com answers with an older version of the endpoint.
const APIVersion = "2024-08-13"

// VersionHeader is the header that names APIVersion.
const VersionHeader = "cal-api-version"

// callTimeout bounds each call to cal.com.
const callTimeout = 10 * time.Second

// maxAnswer is the most of an answer read.
const maxAnswer = 1 << 20

// Client calls cal.com's API v2 with a connector's API key (cal_live_… or cal_test_…),
// given per call: one Client serves every shop.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a Client of the API at baseURL ("" means DefaultAPIURL) over hc (nil
// means a client that follows no redirect).
func NewClient(baseURL string, hc *http.Client) *Client {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: hc}
}

// booking is cal.com's booking as the v2 API answers it, as far as a move reads it.
type booking struct {
	UID              string `json:"uid"`
	Status           string `json:"status"`
	Start            string `json:"start"`
	RescheduledToUID string `json:"rescheduledToUid"`
}

// answer is the v2 API's envelope: {status, data} or {status: "error", error}.
type answer struct {
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Move reschedules the booking m.ExternalID to m.To (POST /v2/bookings/{uid}/reschedule).
// cal.com makes a new booking for it, whose uid Moved.ExternalID is, and sends
// BOOKING_RESCHEDULED for it. A booking already rescheduled (an earlier attempt whose
// answer was lost) answers 400: the booking is then read, and when it was rescheduled
// to a booking at m.To, that one is the move. A refusal is a *connectors.VendorError.
func (c *Client) Move(ctx context.Context, key string, m connectors.Move) (connectors.Moved, error) {
	body, _ := json.Marshal(map[string]string{
		"start":              m.To.UTC().Format("2006-01-02T15:04:05.000Z"),
		"reschedulingReason": "Moved to an earlier time the customer accepted",
	})
	var b booking
	err := c.call(ctx, key, http.MethodPost, "/v2/bookings/"+url.PathEscape(m.ExternalID)+"/reschedule", body, &b)
	var ve *connectors.VendorError
	if errors.As(err, &ve) && ve.Status == http.StatusBadRequest {
		var old booking
		if c.call(ctx, key, http.MethodGet, "/v2/bookings/"+url.PathEscape(m.ExternalID), nil, &old) == nil &&
			strings.EqualFold(old.Status, "cancelled") && old.RescheduledToUID != "" {
			var nb booking
			if c.call(ctx, key, http.MethodGet, "/v2/bookings/"+url.PathEscape(old.RescheduledToUID), nil, &nb) == nil && sameTime(nb.Start, m.To) {
				return connectors.Moved{ExternalID: nb.UID}, nil
			}
		}
		return connectors.Moved{}, err
	}
	if err != nil {
		return connectors.Moved{}, err
	}
	if b.UID == "" {
		return connectors.Moved{}, fmt.Errorf("calcom: reschedule answered no booking uid")
	}
	return connectors.Moved{ExternalID: b.UID}, nil
}

func sameTime(s string, t time.Time) bool {
	v, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && v.Equal(t)
}

// call makes one request and reads its data into out. A non-2xx answer is a
// *connectors.VendorError with cal.com's own message.
func (c *Client) call(ctx context.Context, key, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("calcom: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(VersionHeader, APIVersion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("calcom: %s booking: %w", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("calcom: read answer: %w", err)
	}
	var a answer
	_ = json.Unmarshal(raw, &a)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ve := &connectors.VendorError{Vendor: "cal.com", Status: resp.StatusCode}
		if a.Error != nil {
			ve.Code, ve.Message = a.Error.Code, clip(a.Error.Message, 300)
		}
		return ve
	}
	if len(a.Data) == 0 {
		return fmt.Errorf("calcom: an answer without data")
	}
	if err := json.Unmarshal(a.Data, out); err != nil {
		return fmt.Errorf("calcom: read answer: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
