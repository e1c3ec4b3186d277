package shops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

func ptr[T any](v T) *T { return &v }

// TestCharge: what each payment mode's page charges at the YES: the price, the deposit
// (a fixed amount at most the price, or a share rounded half up, at least one unit), or
// nothing.
func TestCharge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		shop  Shop
		price int64
		want  int64
	}{
		{"checkout", Shop{PaymentMode: PaymentCheckout}, 4500, 4500},
		{"none", Shop{PaymentMode: PaymentNone}, 4500, 0},
		{"card", Shop{PaymentMode: PaymentCard}, 4500, 0},
		{"fixed deposit", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositCents: ptr(int64(1000))}}, 4500, 1000},
		{"fixed deposit above the price", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositCents: ptr(int64(9000))}}, 4500, 4500},
		{"20 percent", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositPercent: ptr(20)}}, 4500, 900},
		{"a share rounded half up", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositPercent: ptr(25)}}, 4502, 1126},
		{"at least one unit", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositPercent: ptr(1)}}, 10, 1},
		{"100 percent", Shop{PaymentMode: PaymentDeposit, Protection: Protection{DepositPercent: ptr(100)}}, 4500, 4500},
	} {
		require.Equal(t, tc.want, tc.shop.Charge(tc.price), tc.name)
	}
}

// TestProtectionChange: the settings' checks, the deposit's two forms replacing each
// other, and the policy's version moving on only when the policy's words, hours or fees
// change.
func TestProtectionChange(t *testing.T) {
	t.Parallel()
	cur := Protection{LateCancelHours: 24}
	field := func(err error) string {
		var p *problem.Error
		require.ErrorAs(t, err, &p)
		return p.Field
	}

	_, err := ProtectionChange{}.apply(cur, PaymentDeposit, true)
	require.Equal(t, "deposit_cents", field(err), "a deposit shop needs its deposit")
	_, err = ProtectionChange{DepositCents: ptr(int64(100)), DepositCentsSet: true, DepositPercent: ptr(10), DepositPercentSet: true}.apply(cur, PaymentDeposit, true)
	require.Equal(t, "deposit_cents", field(err), "not both")
	_, err = ProtectionChange{DepositPercent: ptr(101), DepositPercentSet: true}.apply(cur, PaymentDeposit, true)
	require.Equal(t, "deposit_percent", field(err))
	_, err = ProtectionChange{KeepCard: ptr(true)}.apply(cur, PaymentCheckout, false)
	require.Equal(t, "keep_card", field(err), "a kept card needs Connect")
	_, err = ProtectionChange{}.apply(cur, PaymentCard, false)
	require.Equal(t, "payment_mode", field(err), "card mode needs Connect")
	_, err = ProtectionChange{LateCancelHours: ptr(721)}.apply(cur, PaymentCheckout, true)
	require.Equal(t, "late_cancel_hours", field(err))
	_, err = ProtectionChange{NoShowFeeCents: ptr(int64(-1))}.apply(cur, PaymentCheckout, true)
	require.Equal(t, "no_show_fee_cents", field(err))
	long := make([]rune, MaxPolicyLen+1)
	for i := range long {
		long[i] = 'é'
	}
	_, err = ProtectionChange{Policy: ptr(string(long))}.apply(cur, PaymentCheckout, true)
	require.Equal(t, "cancellation_policy", field(err), "characters, not bytes, are counted")
	_, err = ProtectionChange{Policy: ptr(string(long[:MaxPolicyLen]))}.apply(cur, PaymentCheckout, true)
	require.NoError(t, err)

	p, err := ProtectionChange{DepositCents: ptr(int64(1000)), DepositCentsSet: true}.apply(cur, PaymentDeposit, true)
	require.NoError(t, err)
	require.Equal(t, 0, p.PolicyVersion, "a deposit is not the policy")
	p, err = ProtectionChange{DepositPercent: ptr(20), DepositPercentSet: true}.apply(p, PaymentDeposit, true)
	require.NoError(t, err)
	require.Nil(t, p.DepositCents, "a share replaces the fixed amount")
	require.Equal(t, 20, *p.DepositPercent)
	_, err = ProtectionChange{NoShowFeeCents: ptr(int64(2000))}.apply(p, PaymentDeposit, true)
	require.Equal(t, "cancellation_policy", field(err), "a fee nobody is shown: refused")
	p, err = ProtectionChange{NoShowFeeCents: ptr(int64(2000)), Policy: ptr("No-shows pay $20.")}.apply(p, PaymentDeposit, true)
	require.NoError(t, err)
	require.Equal(t, 1, p.PolicyVersion)
	p, err = ProtectionChange{NoShowFeeCents: ptr(int64(2000))}.apply(p, PaymentDeposit, true)
	require.NoError(t, err)
	require.Equal(t, 1, p.PolicyVersion, "the same fee again is the same policy")
	p, err = ProtectionChange{Policy: ptr("Free to cancel until 24 h before; no-shows pay $20.")}.apply(p, PaymentDeposit, true)
	require.NoError(t, err)
	require.Equal(t, 2, p.PolicyVersion)
	_, err = ProtectionChange{Policy: ptr("  ")}.apply(p, PaymentDeposit, true)
	require.Equal(t, "cancellation_policy", field(err), "the fee stays: its policy cannot go")
}
