package customers_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
)

// TestPreferencesNamePeople: staff= names the shop's people (case aside, once each, in
// the order written), as the CSV import reads it; written out it names them again, and
// reads back the same. A name the shop lacks is refused in the import's words.
func TestPreferencesNamePeople(t *testing.T) {
	t.Parallel()
	ana := catalog.Staff{ID: uuid.New(), Name: "Ana"}
	ben := catalog.Staff{ID: uuid.New(), Name: "Ben Lee", Active: false}
	staff := []catalog.Staff{ana, ben}
	for _, tc := range []struct {
		name, in, out string
		want          []uuid.UUID
		err           string
	}{
		{"one", "staff=Ana", "staff=Ana", []uuid.UUID{ana.ID}, ""},
		{"case and spaces", "days=sat; staff= ben lee , ANA ,ana", "days=sat; staff=Ben Lee,Ana", []uuid.UUID{ben.ID, ana.ID}, ""},
		{"with the rest", "services=Cut; times=09:00-12:00; staff=Ana", "times=09:00-12:00; services=Cut; staff=Ana", []uuid.UUID{ana.ID}, ""},
		{"none", "", "", nil, ""},
		{"unknown", "staff=Zed", "", nil, `preferences: the shop has no person named "Zed"`},
		{"no staff at all", "staff=Ana", "", nil, `preferences: the shop has no person named "Ana"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			people := staff
			if tc.name == "no staff at all" {
				people = nil
			}
			p, err := customers.ParsePreferences(tc.in, people)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p.StaffIDs)
			require.Equal(t, tc.out, customers.FormatPreferences(p, staff))
			again, err := customers.ParsePreferences(customers.FormatPreferences(p, staff), staff)
			require.NoError(t, err)
			require.Equal(t, p, again)
		})
	}
}
