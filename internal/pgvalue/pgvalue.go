// Package pgvalue builds the pgtype values sqlc's parameters take from Go's plain ones,
// one way: a value that is always set (Text), and the ones whose zero means NULL.
package pgvalue

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Text is s, set even when empty.
func Text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

// TextOrNull is s, or NULL when s is empty.
func TextOrNull(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// Int4OrNull is v, or NULL when v is 0.
func Int4OrNull(v int) pgtype.Int4 { return pgtype.Int4{Int32: int32(v), Valid: v != 0} }

// UUIDOrNull is id, or NULL when it is uuid.Nil.
func UUIDOrNull(id uuid.UUID) uuid.NullUUID { return uuid.NullUUID{UUID: id, Valid: id != uuid.Nil} }
