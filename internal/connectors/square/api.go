package square

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// DefaultAPIURL is Square's API (SQUARE_API_URL overrides it; Square's sandbox is
// https://connect.squareupsandbox.com).
const DefaultAPIURL = "https://connect.squareup.com"

// APIVersion is the Square-Version the client speaks.
const APIVersion = "2025-10-16"

// VersionHeader is the header that names APIVersion.
const VersionHeader = "Square-Version"

// callTimeout bounds each call to Square.
const callTimeout = 10 * time.Second

const maxAnswer = 1 << 20

// conflictTries is how many times a move reads the booking again after Square refused
// the version it named (someone changed the booking in between).
const conflictTries = 3

// Client calls Square's Bookings API with a connector's access token, given per call:
// one Client serves every shop.
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

// apiBooking is Square's booking as the API answers it, as far as a move reads it.
type apiBooking struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
	Status  string `json:"status"`
	StartAt string `json:"start_at"`
}

type apiError struct {
	Category string `json:"category"`
	Code     string `json:"code"`
	Detail   string `json:"detail"`
	Field    string `json:"field"`
}

type bookingAnswer struct {
	Booking *apiBooking `json:"booking"`
	Errors  []apiError  `json:"errors"`
}

// Move moves the booking m.ExternalID to start at m.To: it reads the booking (GET
// /v2/bookings/{id}) for its current version, then updates it with that version (PUT
// /v2/bookings/{id}, an idempotency key of m.Key and the version, so a retry of a
// write whose answer was lost is answered, not applied twice). A booking already at
// m.To is the move made (by an earlier attempt). Square refusing the version
// (VERSION_MISMATCH: the booking changed in between) reads it again, up to three
// times. A cancelled booking, or a refusal, is a *connectors.VendorError.
func (c *Client) Move(ctx context.Context, token string, m connectors.Move) (connectors.Moved, error) {
	path := "/v2/bookings/" + url.PathEscape(m.ExternalID)
	var last error
	for range conflictTries {
		var cur bookingAnswer
		if err := c.call(ctx, token, http.MethodGet, path, nil, &cur); err != nil {
			return connectors.Moved{}, err
		}
		b := cur.Booking
		if start, err := time.Parse(time.RFC3339Nano, b.StartAt); err == nil && start.Equal(m.To) {
			return connectors.Moved{ExternalID: b.ID, Version: b.Version}, nil
		}
		if statuses[b.Status] != connectors.StatusBooked {
			return connectors.Moved{}, &connectors.VendorError{Vendor: "Square", Status: http.StatusConflict, Code: b.Status,
				Message: "the booking is no longer booked in Square", Final: true}
		}
		body, _ := json.Marshal(map[string]any{
			"idempotency_key": m.Key + ":" + strconv.FormatInt(b.Version, 10),
			"booking":         map[string]any{"version": b.Version, "start_at": m.To.UTC().Format(time.RFC3339)},
		})
		var up bookingAnswer
		err := c.call(ctx, token, http.MethodPut, path, body, &up)
		if ve := (*connectors.VendorError)(nil); errors.As(err, &ve) && (ve.Code == "VERSION_MISMATCH" || ve.Status == http.StatusConflict) {
			last = err
			continue
		}
		if err != nil {
			return connectors.Moved{}, err
		}
		return connectors.Moved{ExternalID: up.Booking.ID, Version: up.Booking.Version}, nil
	}
	return connectors.Moved{}, last
}

// call makes one request and reads its answer into out (which must have a booking).
// A non-2xx answer is a *connectors.VendorError with Square's first error.
func (c *Client) call(ctx context.Context, token, method, path string, body []byte, out *bookingAnswer) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("square: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(VersionHeader, APIVersion)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("square: %s booking: %w", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("square: read answer: %w", err)
	}
	_ = json.Unmarshal(raw, out)
	if resp.StatusCode < 200 || resp.StatusCode > 299 || len(out.Errors) > 0 {
		ve := &connectors.VendorError{Vendor: "Square", Status: resp.StatusCode}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			ve.Code, ve.Message = e.Code, e.Detail
			if len(ve.Message) > 300 {
				ve.Message = strings.ToValidUTF8(ve.Message[:300], "")
			}
		}
		return ve
	}
	if out.Booking == nil || out.Booking.ID == "" {
		return fmt.Errorf("square: an answer without a booking")
	}
	return nil
}
