package api

import (
	"time"

	"github.com/google/uuid"
)

// SMSSender is a shop's own sender as the JSON API shows it (the shop's sms_sender):
// its number, its Messaging Service and its US A2P 10DLC registration.
type SMSSender struct {
	Number              string           `json:"number"`
	MessagingServiceSID *string          `json:"messaging_service_sid"`
	Registration        *SMSRegistration `json:"registration"`
}

// SMSRegistration is the state of a sender's A2P 10DLC registration.
type SMSRegistration struct {
	Status         string    `json:"status"`
	BrandStatus    *string   `json:"brand_status"`
	CampaignStatus *string   `json:"campaign_status"`
	FailureReason  *string   `json:"failure_reason"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// SMSSenderUpdated is the data of an sms_sender.updated webhook event: the sender as
// the shop's sms_sender shows it (SMSSender's fields), with the shop's id.
type SMSSenderUpdated struct {
	ShopID              uuid.UUID        `json:"shop_id"`
	Number              string           `json:"number"`
	MessagingServiceSID *string          `json:"messaging_service_sid"`
	Registration        *SMSRegistration `json:"registration"`
}
