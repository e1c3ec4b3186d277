// Package senders owns each shop's own sender: the number and the Messaging Service the
// platform sets up for it through the provider's API (Provision), the texts that then go
// through that service (Texter), and its US A2P 10DLC registration (Register), which a
// durable River job walks through the provider's ISV flow and watches (RegistrationWorker).
//
// Provisioning, one step after the other, each step's result recorded before the next:
//
//	number (bought, or adopted from the account) → Messaging Service → number attached
//	→ the shop's sms_number, the sender 'active', sms_sender.updated
//
// A retry resumes at the first step without a record; a number or service made by an
// attempt that died before recording it is found again by its name, so a retry buys
// nothing twice.
//
// A registration's status:
//
//	submitted → brand_pending → campaign_pending → verified
//	     \            \                \
//	      `------------`----------------`--→ failed (Twilio's reason kept) → submitted again
//
// The job records what every step made (the provider's steps registering the business,
// which the adapter names and orders, then the brand and the campaign) by step name
// before it moves on, so an instance killed mid-flow is resumed by another without a
// second brand or campaign.
// Every provider call of the flow is paced, across every instance, to the rate Twilio
// allows these endpoints (1 a second by default). Each change of a status is recorded
// (sms_registration_transitions) and announced (sms_sender.updated).
package senders
