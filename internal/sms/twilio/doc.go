// Package twilio sends texts through Twilio with twilio-go, and checks (Validator) and
// makes (Signature, for tests and simulated texts) the signatures of Twilio's webhooks. It is the only package that imports twilio-go: the rest of the
// server speaks internal/sms's vendor-neutral Message and errors.
package twilio
