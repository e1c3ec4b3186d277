package api

import (
	"time"

	"github.com/google/uuid"
)

// Connector is one of the shop's booking systems that keep its appointment book, as the
// owners' API shows it (/api/connectors). Its secret is never shown again after the
// answer that made it.
type Connector struct {
	ID uuid.UUID `json:"id"`
	// Kind is calcom, square or ics.
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// WebhookURL is where the vendor posts its webhooks (cal.com's subscriber URL,
	// Square's notification URL); null for a calendar feed, which is polled.
	WebhookURL *string `json:"webhook_url"`
	// SignatureKeySet is false for a Square connector whose subscription signature key is
	// not given yet (PATCH it): until then every delivery is refused.
	SignatureKeySet bool `json:"signature_key_set"`
	// HasAPIKey says the connector holds the vendor's API key (PUT .../api_key; cal.com
	// and Square only): the shop's move-ups are written back through the vendor's API
	// instead of being listed for the owner to copy.
	HasAPIKey bool `json:"has_api_key"`
	// LastDelivery is the most recent delivery and what became of it; null before the
	// first.
	LastDelivery *ConnectorDelivery `json:"last_delivery"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
	// Secret is a cal.com connector's webhook secret, only in the answer that made it.
	Secret string `json:"secret,omitempty"`
}

// ConnectorDelivery is a connector's last delivery.
type ConnectorDelivery struct {
	At time.Time `json:"at"`
	// Event is the vendor's name of it (BOOKING_CANCELLED, booking.updated); "" when it
	// was refused before it was read.
	Event string `json:"event"`
	// Result is applied, duplicate, ignored, bad_signature, bad_payload, rejected,
	// failed, or not_modified (a calendar feed's poll answered 304).
	Result string `json:"result"`
}

// ConnectorList is the shop's connectors, oldest first (GET /api/connectors).
type ConnectorList struct {
	Connectors []Connector `json:"connectors"`
}
