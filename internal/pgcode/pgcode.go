// Package pgcode tells Postgres's refusals apart by their SQLSTATE, the one place the
// codes are spelled: a constraint that holds is how the database says "someone got
// there first", and each package turns that into its own domain error.
package pgcode

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// The SQLSTATEs the server acts on.
const (
	uniqueViolation     = "23505"
	exclusionViolation  = "23P01"
	foreignKeyViolation = "23503"
	deadlockDetected    = "40P01"
)

// Unique reports whether err is a unique_violation: a row with that key exists.
func Unique(err error) bool { return is(err, uniqueViolation) }

// Exclusion reports whether err is an exclusion_violation: an exclusion constraint
// (two live bookings of one person's overlapping time) refused the row.
func Exclusion(err error) bool { return is(err, exclusionViolation) }

// ForeignKey reports whether err is a foreign_key_violation: the row it refers to is
// gone (deleted meanwhile).
func ForeignKey(err error) bool { return is(err, foreignKeyViolation) }

// Deadlock reports whether err is deadlock_detected: Postgres cancelled this statement
// to break a wait cycle with another transaction; the statement changed nothing, and
// run again it meets what the other committed.
func Deadlock(err error) bool { return is(err, deadlockDetected) }

func is(err error, code string) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == code
}
