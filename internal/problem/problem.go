// Package problem is the small vocabulary of errors the domain returns to its callers:
// what kind of problem it is, a stable code, and a message fit for the person who caused
// it. The HTTP layer maps a Kind to a status in one place; nothing else is exposed.
package problem

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind classifies a problem for the edges (HTTP status, SMS wording).
type Kind int

// The kinds of problem.
const (
	Invalid Kind = iota + 1
	NotFound
	Conflict
	Unauthorized
	Unavailable
	// Limited: too many of these too soon; RetryAfter says when one more may go.
	Limited
)

// Error is a problem the caller can act on.
type Error struct {
	Kind    Kind
	Code    string
	Field   string
	Message string
	// RetryAfter is, for a Limited problem, how long until the caller may try again.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Invalidf reports bad input in field.
func Invalidf(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Code: "invalid_" + strings.ReplaceAll(field, ".", "_"), Field: field, Message: fmt.Sprintf(format, args...)}
}

// New makes a problem of kind with a code and message.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// As returns the problem inside err, if any.
func As(err error) (*Error, bool) {
	var p *Error
	ok := errors.As(err, &p)
	return p, ok
}
