package pgcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotrecovery/slotrecovery/internal/pgcode"
)

func TestCodes(t *testing.T) {
	wrapped := func(code string) error { return fmt.Errorf("insert: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name                                 string
		err                                  error
		unique, exclusion, foreign, deadlock bool
	}{
		{"unique, wrapped", wrapped("23505"), true, false, false, false},
		{"exclusion", wrapped("23P01"), false, true, false, false},
		{"foreign key", wrapped("23503"), false, false, true, false},
		{"deadlock", wrapped("40P01"), false, false, false, true},
		{"another code", wrapped("40001"), false, false, false, false},
		{"not Postgres's", errors.New("23505"), false, false, false, false},
		{"nil", nil, false, false, false, false},
	} {
		got := [4]bool{pgcode.Unique(tc.err), pgcode.Exclusion(tc.err), pgcode.ForeignKey(tc.err), pgcode.Deadlock(tc.err)}
		if got != [4]bool{tc.unique, tc.exclusion, tc.foreign, tc.deadlock} {
			t.Errorf("%s: unique, exclusion, foreign key, deadlock = %v", tc.name, got)
		}
	}
}
