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
		name                       string
		err                        error
		unique, exclusion, foreign bool
	}{
		{"unique, wrapped", wrapped("23505"), true, false, false},
		{"exclusion", wrapped("23P01"), false, true, false},
		{"foreign key", wrapped("23503"), false, false, true},
		{"another code", wrapped("40001"), false, false, false},
		{"not Postgres's", errors.New("23505"), false, false, false},
		{"nil", nil, false, false, false},
	} {
		if got := [3]bool{pgcode.Unique(tc.err), pgcode.Exclusion(tc.err), pgcode.ForeignKey(tc.err)}; got != [3]bool{tc.unique, tc.exclusion, tc.foreign} {
			t.Errorf("%s: unique, exclusion, foreign key = %v", tc.name, got)
		}
	}
}
