package hooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/api"
)

// An event recorded before migration 0050 holds a subject, not its data: the object in
// the form it was stored in, which the dispatcher of that time rendered with the owners'
// API's rendering when it sent the event. Such an event still waiting to be sent (the
// seconds around the upgrade) is rendered here into the same JSON, once, by legacyData;
// the forms below are frozen copies of what was stored. They can go once no
// undispatched event older than 0050 can remain (one retention period, Retention).

// legacyData renders the subject of an event of type typ recorded before 0050.
func legacyData(typ string, subject []byte) (any, error) {
	switch {
	case IsOpeningType(typ):
		// Since 0040, in the API's shape already, as Postgres wrote it
		// (webhook_opening_subject): times as Postgres writes them, net_cents not there.
		var o api.Opening
		if err := json.Unmarshal(subject, &o); err != nil {
			return nil, fmt.Errorf("hooks: decode opening subject: %w", err)
		}
		if o.ID == uuid.Nil {
			return nil, fmt.Errorf("hooks: opening subject without an opening")
		}
		return o.Normal(), nil
	case IsCustomerType(typ):
		var c legacyCustomer
		if err := json.Unmarshal(subject, &c); err != nil {
			return nil, fmt.Errorf("hooks: decode customer subject: %w", err)
		}
		if c.ID == uuid.Nil {
			return nil, fmt.Errorf("hooks: customer subject without a customer")
		}
		return c.data(), nil
	case IsMessageType(typ):
		// Stored as inbox.Received, whose tags were the wire's.
		var m api.MessageReceived
		if err := json.Unmarshal(subject, &m); err != nil {
			return nil, fmt.Errorf("hooks: decode message subject: %w", err)
		}
		if m.ConversationID == uuid.Nil {
			return nil, fmt.Errorf("hooks: message subject without a conversation")
		}
		m.At = m.At.UTC()
		return m, nil
	case typ == SMSSenderUpdated:
		var s legacySender
		if err := json.Unmarshal(subject, &s); err != nil {
			return nil, fmt.Errorf("hooks: decode sender subject: %w", err)
		}
		return s.data(), nil
	}
	return nil, fmt.Errorf("hooks: no rendering for event type %q", typ)
}

// legacyCustomer is a customer event's subject before 0050: customers.Customer under its
// frozen field names.
type legacyCustomer struct {
	ID            uuid.UUID  `json:"ID"`
	Phone         string     `json:"Phone"`
	Name          string     `json:"Name"`
	Language      string     `json:"Language"`
	SMSOptIn      bool       `json:"SMSOptIn"`
	OptedOutAt    *time.Time `json:"OptedOutAt"`
	UnreachableAt *time.Time `json:"UnreachableAt"`
	Priority      int        `json:"Priority"`
	CreatedAt     time.Time  `json:"CreatedAt"`
	Preferences   struct {
		Days    []int `json:"Days"`
		Windows []struct {
			Start int `json:"Start"`
			End   int `json:"End"`
		} `json:"Windows"`
		Services []string    `json:"Services"`
		StaffIDs []uuid.UUID `json:"StaffIDs"`
	} `json:"Preferences"`
}

// data is what customers.Customer's API rendering made of it then.
func (c legacyCustomer) data() api.Customer {
	out := api.Customer{
		ID: c.ID, Phone: c.Phone, Name: c.Name, SMSOptIn: c.SMSOptIn, Priority: c.Priority,
		OptedOut: c.OptedOutAt != nil, CreatedAt: c.CreatedAt.UTC(),
		Preferences: api.Preferences{Days: []string{}, Windows: []api.Window{}, Services: []string{}},
	}
	switch {
	case c.OptedOutAt != nil:
		out.Status = "opted_out"
	case c.UnreachableAt != nil:
		out.Status = "unreachable"
	case c.SMSOptIn:
		out.Status = "opted_in"
	default:
		out.Status = "not_opted_in"
	}
	if c.OptedOutAt != nil {
		t := c.OptedOutAt.UTC()
		out.OptedOutAt = &t
	}
	if c.Language != "" {
		l := c.Language
		out.Language = &l
	}
	days := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	for _, d := range c.Preferences.Days {
		name := ""
		if d >= 1 && d <= 7 {
			name = days[d-1]
		}
		out.Preferences.Days = append(out.Preferences.Days, name)
	}
	clock := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	for _, w := range c.Preferences.Windows {
		out.Preferences.Windows = append(out.Preferences.Windows, api.Window{Start: clock(w.Start), End: clock(w.End)})
	}
	out.Preferences.Services = append(out.Preferences.Services, c.Preferences.Services...)
	out.Preferences.StaffIDs = append(out.Preferences.StaffIDs, c.Preferences.StaffIDs...)
	return out
}

// legacySender is an sms_sender.updated event's subject before 0050: senders.Sender
// under its tags of then.
type legacySender struct {
	ShopID              uuid.UUID `json:"shop_id"`
	Number              string    `json:"number"`
	MessagingServiceSID string    `json:"messaging_service_sid"`
	Registration        *struct {
		Status         string    `json:"status"`
		BrandStatus    string    `json:"brand_status"`
		CampaignStatus string    `json:"campaign_status"`
		FailureReason  string    `json:"failure_reason"`
		UpdatedAt      time.Time `json:"updated_at"`
	} `json:"registration"`
}

func (s legacySender) data() api.SMSSenderUpdated {
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	out := api.SMSSenderUpdated{ShopID: s.ShopID, Number: s.Number, MessagingServiceSID: str(s.MessagingServiceSID)}
	if r := s.Registration; r != nil {
		out.Registration = &api.SMSRegistration{Status: r.Status, BrandStatus: str(r.BrandStatus),
			CampaignStatus: str(r.CampaignStatus), FailureReason: str(r.FailureReason), UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out
}
