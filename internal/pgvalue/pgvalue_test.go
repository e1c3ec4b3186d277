package pgvalue_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
)

func TestValues(t *testing.T) {
	if got := pgvalue.Text(""); got != (pgtype.Text{Valid: true}) {
		t.Errorf("Text(\"\") = %+v, want an empty set text", got)
	}
	if got := pgvalue.TextOrNull(""); got.Valid {
		t.Errorf("TextOrNull(\"\") = %+v, want NULL", got)
	}
	if got := pgvalue.TextOrNull("a"); got != (pgtype.Text{String: "a", Valid: true}) {
		t.Errorf("TextOrNull(a) = %+v", got)
	}
	if got := pgvalue.Int4OrNull(0); got.Valid {
		t.Errorf("Int4OrNull(0) = %+v, want NULL", got)
	}
	if got := pgvalue.Int4OrNull(21610); got != (pgtype.Int4{Int32: 21610, Valid: true}) {
		t.Errorf("Int4OrNull(21610) = %+v", got)
	}
	if got := pgvalue.UUIDOrNull(uuid.Nil); got.Valid {
		t.Errorf("UUIDOrNull(Nil) = %+v, want NULL", got)
	}
	id := uuid.New()
	if got := pgvalue.UUIDOrNull(id); got != (uuid.NullUUID{UUID: id, Valid: true}) {
		t.Errorf("UUIDOrNull(id) = %+v", got)
	}
}
