package twilio_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

func business(typ string) sms.Business {
	b := sms.Business{Name: "Ana's Salon LLC", Type: typ, EIN: "12-3456789", Website: "https://anas.example.com",
		Address:   sms.Address{Street: "1 Congress Ave", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"},
		FirstName: "Ana", LastName: "Diaz", Email: "ana@example.com", Phone: "+15125550142"}
	if typ == "sole_proprietor" {
		b.EIN, b.Website = "", ""
	}
	return b
}

// walk runs b's business steps against the fake until none is left, recording each
// step's result as internal/senders does; it returns the steps' names in order.
func walk(t *testing.T, tw *twilio.Sender, b sms.Business, done sms.Done) []string {
	t.Helper()
	var names []string
	for {
		step, ok := tw.NextBusinessStep(b, done)
		if !ok {
			return names
		}
		require.NotContains(t, names, step.Name, "a step comes once")
		sid, err := step.Run(t.Context())
		require.NoError(t, err, step.Name)
		done[step.Name] = sid
		names = append(names, step.Name)
	}
}

// TestNextBusinessStepWalksTrustHub: the adapter plans a business's registration in
// TrustHub's terms (internal/senders never sees them): a company gets a secondary
// customer profile (business information, representative, address document, the
// platform's primary profile) and an A2P trust product under their policies, a sole
// proprietor a starter profile and a sole proprietor trust product; each is evaluated
// and submitted, and the brand is made from both, of the business's type.
func TestNextBusinessStepWalksTrustHub(t *testing.T) {
	t.Parallel()
	const primary = "BU0123456789abcdef0123456789abcdef"
	for name, tc := range map[string]struct {
		typ                          string
		profilePolicy, productPolicy string
		assigned                     int
		brandType                    string
	}{
		"company":         {"private_profit", "RNdfbf3fae0e1107f8aded0e7cead80bf5", "RNb0d4771c2c98518d916a3d4cd70a8f8b", 4, "STANDARD"},
		"sole proprietor": {"sole_proprietor", "RN806dd6cd175f314e1f96a9727ee271f4", "RN670d5d2e282a6130ae063b234b6019c8", 2, "SOLE_PROPRIETOR"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := twiliofake.New(t)
			tw, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken,
				APIURL: fake.URL(), PrimaryProfileSID: primary})
			require.NoError(t, err)
			b := business(tc.typ)
			done := sms.Done{}
			names := walk(t, tw, b, done)
			require.Equal(t, "customer_profile", names[0])
			require.Equal(t, "trust_product_submitted", names[len(names)-1])
			for _, bundle := range fake.Bundles() {
				require.Equal(t, "pending-review", bundle.Status, bundle.Kind)
				switch bundle.Kind {
				case "customer_profile":
					require.Equal(t, tc.profilePolicy, bundle.PolicySID)
					require.Len(t, bundle.Assigned, tc.assigned)
					if b.SoleProprietor() {
						require.NotContains(t, bundle.Assigned, primary)
					} else {
						require.Contains(t, bundle.Assigned, primary, "the platform's primary profile")
					}
				case "trust_product":
					require.Equal(t, tc.productPolicy, bundle.PolicySID)
					require.Equal(t, []string{done["messaging_profile_information"], done["customer_profile"]}, bundle.Assigned)
				}
			}
			_, more := tw.NextBusinessStep(b, done)
			require.False(t, more, "nothing left once both are submitted")

			// A step whose answer was lost is planned again, and only it.
			delete(done, "trust_product_submitted")
			step, ok := tw.NextBusinessStep(b, done)
			require.True(t, ok)
			require.Equal(t, "trust_product_submitted", step.Name)

			brand, err := tw.CreateBrand(t.Context(), b, done)
			require.NoError(t, err)
			require.Equal(t, sms.InReview, brand.Review)
			brands := fake.Brands()
			require.Len(t, brands, 1)
			require.Equal(t, tc.brandType, brands[0].BrandType)
			require.Equal(t, done["customer_profile"], brands[0].CustomerProfileSID)
			require.Equal(t, done["trust_product"], brands[0].TrustProductSID)
			found, ok, _, err := tw.FindBrand(t.Context(), done, "")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, brand.SID, found.SID)
		})
	}
}

// TestIncompleteBusinessIsReported: a profile TrustHub finds incomplete (here, nothing
// was assigned to it) answers sms.IncompleteError with TrustHub's reason, which the
// registration records as its failure.
func TestIncompleteBusinessIsReported(t *testing.T) {
	t.Parallel()
	tw, _ := newSender(t)
	b := business("private_profit")
	done := sms.Done{}
	for {
		step, ok := tw.NextBusinessStep(b, done)
		require.True(t, ok)
		if step.Name == "customer_profile_evaluated" {
			_, err := step.Run(t.Context())
			var incomplete *sms.IncompleteError
			require.True(t, errors.As(err, &incomplete), "%v", err)
			require.Contains(t, incomplete.Reason, "incomplete")
			return
		}
		if len(step.Name) > len("assigned:") && step.Name[:len("assigned:")] == "assigned:" {
			done[step.Name] = "skipped" // the assignments are lost
			continue
		}
		sid, err := step.Run(t.Context())
		require.NoError(t, err)
		done[step.Name] = sid
	}
}
