package dashboard

import (
	"context"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The settings page's card of the shop's sender: its number, whether it has its own
// Messaging Service, and where its US A2P 10DLC registration stands, with Twilio's
// reason when it failed.

// senderView is the shop's sender in plain words.
type senderView struct {
	Number  string
	Service string
	// Status says where the registration stands; Detail what it means for the texts;
	// Reason is Twilio's, after a failure.
	Status, Detail, Reason string
	Ready                  bool
	// Steps are the registration's stages, Done how many are behind it.
	Done int
}

var registrationSteps = []string{"Submitted", "Brand approved", "Campaign verified"}

// senderViewOf reads the shop's sender; nil without senders (no Twilio) or when it
// cannot be read (the page still shows the rest).
func (d *Dashboard) senderViewOf(ctx context.Context, shop shops.Shop) *senderView {
	if d.cfg.Senders == nil {
		return nil
	}
	s, err := d.cfg.Senders.Get(ctx, shop)
	if err != nil {
		d.log.Error("read sender", "shop_id", shop.ID, "err", err)
		return nil
	}
	v := &senderView{Number: s.Number, Service: s.MessagingServiceSID}
	us := senders.USLocal(s.Number)
	r := s.Registration
	switch {
	case r == nil && !us:
		v.Status, v.Ready = "No registration needed", true
		v.Detail = "Your number is not a US local number; US A2P 10DLC registration does not apply."
	case r == nil && s.MessagingServiceSID == "":
		v.Status = "Not registered"
		v.Detail = "US carriers block texts from unregistered local numbers. Ask us to set up your own sender, then register your business."
	case r == nil:
		v.Status = "Not registered"
		v.Detail = "US carriers block texts from unregistered local numbers: register your business (POST /api/shop/sms/registration)."
	case r.Status == senders.StatusVerified:
		v.Status, v.Ready, v.Done = "Registered", true, 3
		v.Detail = "Your campaign is verified: US carriers take your texts."
	case r.Status == senders.StatusFailed:
		v.Status, v.Reason = "Registration failed", r.FailureReason
		v.Detail = "Fix what Twilio says below and submit the registration again."
		if r.BrandStatus == "APPROVED" {
			v.Done = 2
		} else {
			v.Done = 1
		}
	case r.Status == senders.StatusCampaignPending:
		v.Status, v.Done = "Campaign under review", 2
		v.Detail = "Your brand is approved; carriers are vetting the campaign (usually days). Texts to US customers wait for it."
	case r.Status == senders.StatusBrandPending:
		v.Status, v.Done = "Brand under review", 1
		v.Detail = "Your business is with Twilio and The Campaign Registry (minutes to days; a sole proprietor confirms a code texted to the owner's mobile)."
	default:
		v.Status, v.Done = "Submitted", 1
		v.Detail = "Your business's details are on their way to Twilio."
	}
	return v
}

// senderCard is the sender's card; nothing without senders.
func (v settingsView) senderCard() g.Node {
	s := v.Sender
	if s == nil {
		return nil
	}
	statusClass := "alert"
	if s.Ready {
		statusClass = "notice"
	}
	var steps []g.Node
	for i, name := range registrationSteps {
		mark := "○ "
		if i < s.Done {
			mark = "● "
		}
		steps = append(steps, h.Li(g.Text(mark+name)))
	}
	service := "Texts go out from this number."
	if s.Service != "" {
		service = "Texts go out through your own Messaging Service (" + s.Service + ")."
	}
	return h.Section(h.Class("card"), h.Aria("labelledby", "sender-h"), h.ID("sender"),
		h.H2(h.ID("sender-h"), g.Text("Your SMS sender")),
		h.P(g.Text("Number "+s.Number+". "+service)),
		h.P(h.Class(statusClass), h.ID("sender-status"), h.Strong(g.Text(s.Status)), g.Text(". "+s.Detail)),
		g.If(s.Reason != "", h.P(h.Class("alert"), h.ID("sender-reason"), g.Text("Twilio says: "+s.Reason))),
		h.Ol(h.Class("steps"), h.ID("sender-steps"), g.Group(steps)),
	)
}
