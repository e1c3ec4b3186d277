package sms_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

func TestReasonOfAndPredicates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		err    error
		reason sms.Reason
	}{
		{name: "nil", err: nil, reason: sms.ReasonOther},
		{name: "plain error", err: errors.New("21610"), reason: sms.ReasonOther},
		{name: "deadline", err: context.DeadlineExceeded, reason: sms.ReasonOther},
		{name: "invalid message", err: fmt.Errorf("%w: to is empty", sms.ErrInvalidMessage), reason: sms.ReasonOther},
		{name: "outcome unknown", err: sms.ErrOutcomeUnknown, reason: sms.ReasonOther},
		{name: "opted out", err: &sms.Error{Reason: sms.ReasonOptedOut, Code: 21610, Status: 400}, reason: sms.ReasonOptedOut},
		{name: "wrapped opted out", err: fmt.Errorf("send offer: %w", &sms.Error{Reason: sms.ReasonOptedOut}), reason: sms.ReasonOptedOut},
		{name: "unreachable", err: &sms.Error{Reason: sms.ReasonUnreachable, Code: 21614}, reason: sms.ReasonUnreachable},
		{name: "account", err: &sms.Error{Reason: sms.ReasonAccount, Code: 21408}, reason: sms.ReasonAccount},
		{name: "joined account", err: errors.Join(errors.New("x"), &sms.Error{Reason: sms.ReasonAccount}), reason: sms.ReasonAccount},
		// The code alone decides nothing in this package: the provider package classifies.
		{name: "code without reason", err: &sms.Error{Code: 21610, Status: 400}, reason: sms.ReasonOther},
		{name: "server error", err: &sms.Error{Code: 20500, Status: 500}, reason: sms.ReasonOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.reason, sms.ReasonOf(tc.err))
			permanent := tc.reason == sms.ReasonOptedOut || tc.reason == sms.ReasonUnreachable
			require.Equal(t, permanent, sms.Permanent(tc.err))
			require.Equal(t, permanent, tc.reason.Permanent())
			require.Equal(t, tc.reason == sms.ReasonOptedOut, sms.OptedOut(tc.err))
			require.Equal(t, tc.reason == sms.ReasonAccount, sms.AccountProblem(tc.err))
		})
	}
}

func TestReasonString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "other", sms.ReasonOther.String())
	require.Equal(t, "opted_out", sms.ReasonOptedOut.String())
	require.Equal(t, "unreachable", sms.ReasonUnreachable.String())
	require.Equal(t, "account", sms.ReasonAccount.String())
	require.Equal(t, "other", sms.Reason(200).String(), "an unknown value stays inside the bounded set")
	var zero sms.Reason
	require.Equal(t, sms.ReasonOther, zero)
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	e := &sms.Error{Reason: sms.ReasonUnreachable, Code: 21211, Status: 400, Message: "The 'To' number +15555550167 is not a valid phone number."}
	require.Equal(t, "sms provider error 21211 (unreachable, http 400)", e.Error())
	require.NotContains(t, e.Error(), "+1555", "the provider's message may quote the number: left out")

	report := &sms.Error{Reason: sms.ReasonAccount, Code: 30034}
	require.Equal(t, "sms provider error 30034 (account)", report.Error())
}

// TestParseReason: every reason's name reads back as the reason; anything else is other.
func TestParseReason(t *testing.T) {
	t.Parallel()
	for _, r := range []sms.Reason{sms.ReasonOther, sms.ReasonOptedOut, sms.ReasonUnreachable, sms.ReasonAccount} {
		require.Equal(t, r, sms.ParseReason(r.String()))
	}
	require.Equal(t, sms.ReasonOther, sms.ParseReason("Opted_Out"))
	require.Equal(t, sms.ReasonOther, sms.ParseReason(""))
}
