// Package payments holds what the server knows about taking payment for a booking,
// independent of the provider: the checkout it asks for (CheckoutRequest, Checkout), a
// checkout read back (Session and its SessionState), a verified webhook Event and its
// EventKind, and how a call can fail (the sentinel errors, Error, Transient). The
// provider's client, its webhook signature check and the translation of its statuses
// and event types into these live in the provider package (internal/payments/stripe,
// the only one that imports the provider's SDK); the domain speaks this package's
// types and declares small interfaces for the calls it makes.
//
// The package never logs, never reads the environment and does no I/O.
package payments

import (
	"cmp"
	"errors"
	"fmt"
)

// ErrInvalid reports a request refused before it reached the provider
// (a missing booking id, a non-positive amount, an expiry outside the
// provider's window). Retrying the same request cannot succeed.
var ErrInvalid = errors.New("payments: invalid request")

// ErrAlreadyCompleted reports that a checkout could not be expired because the
// customer already completed it: the booking must stand.
var ErrAlreadyCompleted = errors.New("payments: checkout session already completed")

// ErrNotFound matches (with errors.Is) an *Error for an object the provider does
// not have, e.g. a checkout made with another key or account. Asking again cannot
// find it.
var ErrNotFound = errors.New("payments: no such object at the provider")

// ErrBadSignature reports a missing, malformed, forged or stale webhook
// signature. The handler answers 400 and the provider retries.
var ErrBadSignature = errors.New("payments: bad webhook signature")

// ErrBadPayload reports a correctly signed body that is not an event.
var ErrBadPayload = errors.New("payments: bad webhook event payload")

// Error is an error answered by the provider's API, translated by the provider
// package so that callers need not import its SDK. The provider package decides
// NotFound and Transient, where the provider's error is known.
type Error struct {
	// Provider names the provider that answered, for the error string; empty reads
	// "payment provider".
	Provider string
	// Type is the provider's error type.
	Type string
	// Code is the provider's error code when it gives one.
	Code string
	// Status is the HTTP status of the answer.
	Status int
	// Msg is the provider's human-readable message.
	Msg string
	// RequestID is the provider's request id, for support and the request log.
	RequestID string
	// NotFound is true when the provider has no such object; it makes
	// errors.Is(err, ErrNotFound) true.
	NotFound bool
	// Transient is true when retrying the call later, with the same arguments
	// and idempotency key, may succeed; Transient (the function) reports it.
	Transient bool
	// Err is the provider SDK's own error, if any; Unwrap returns it.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s %d %s", cmp.Or(e.Provider, "payment provider"), e.Status, e.Type)
	if e.Code != "" {
		s += "/" + e.Code
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Unwrap returns the provider SDK's error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) true for an object the provider does not have.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && e.NotFound
}

// Transient reports whether retrying the failed call later, with the same
// arguments and so the same idempotency key, may succeed.
//
// It is false for nil, ErrInvalid, ErrAlreadyCompleted and ErrNotFound; for an
// *Error it is the provider package's verdict (its Transient field). Anything
// else came from the transport (a refused connection, a timeout, a cancelled
// context) or from an answer the SDK could not decode (say, a proxy's HTML 502):
// the call may or may not have reached the provider, and a retry with the same
// idempotency key is safe, so it is true.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrAlreadyCompleted) || errors.Is(err, ErrNotFound) {
		return false
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Transient
	}
	return true
}
