package api

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// WebhookEndpoint is a webhook endpoint as the API shows it; the secret only in the answers
// that make one (creation, rotation). SecretShownOnce marks a creation's answer given
// again for its Idempotency-Key: the secret was in the first answer only.
type WebhookEndpoint struct {
	ID             uuid.UUID  `json:"id"`
	URL            string     `json:"url"`
	Description    string     `json:"description"`
	EnabledEvents  []string   `json:"enabled_events"`
	Disabled       bool       `json:"disabled"`
	DisabledReason *string    `json:"disabled_reason"`
	DisabledAt     *time.Time `json:"disabled_at"`
	FailingSince   *time.Time `json:"failing_since"`
	// PreviousSecretExpiresAt: until then the secret a rotation replaced signs too.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
	Secret                  string     `json:"secret,omitempty"`
	SecretShownOnce         bool       `json:"secret_shown_once,omitempty"`
}

// WebhookEndpointList is GET /api/webhook_endpoints' answer.
type WebhookEndpointList struct {
	WebhookEndpoints []WebhookEndpoint `json:"webhook_endpoints"`
}

// WebhookDelivery is one delivery of an event to an endpoint, as the owner's list shows
// it.
type WebhookDelivery struct {
	ID             uuid.UUID  `json:"id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	EventCreatedAt time.Time  `json:"event_created_at"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	LastAttemptAt  *time.Time `json:"last_attempt_at"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      *string    `json:"last_error"`
	CreatedAt      time.Time  `json:"created_at"`
	FinishedAt     *time.Time `json:"finished_at"`
}

// WebhookDeliveryDetail is a delivery with its body and the log of its attempts.
type WebhookDeliveryDetail struct {
	WebhookDelivery
	// Payload is the body every attempt sends.
	Payload    json.RawMessage  `json:"payload"`
	AttemptLog []WebhookAttempt `json:"attempt_log"`
}

// WebhookAttempt is one attempt of a delivery.
type WebhookAttempt struct {
	At           time.Time `json:"at"`
	Manual       bool      `json:"manual"`
	StatusCode   *int      `json:"status_code"`
	DurationMs   int64     `json:"duration_ms"`
	ResponseHead string    `json:"response_head"`
	Error        *string   `json:"error"`
}

// WebhookDeliveryList is a page of an endpoint's deliveries, newest first.
type WebhookDeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	NextCursor *string           `json:"next_cursor"`
}
