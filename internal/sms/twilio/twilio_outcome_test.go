package twilio_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// TestOutcomeUnknownOnlyAfterTheRequestWentOut: a refused connection proves the text was
// not sent; a timeout after the request was written does not.
func TestOutcomeUnknownOnlyAfterTheRequestWentOut(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	msg := sms.Message{From: "+15550001111", To: "+15550002222", Body: "hi"}

	refused, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: closed})
	require.NoError(t, err)
	_, err = refused.Text(context.Background(), msg)
	require.Error(t, err)
	require.False(t, errors.Is(err, sms.ErrOutcomeUnknown), "connection refused: nothing was sent: %v", err)
	require.False(t, sms.Permanent(err))

	// The request must be written before the client gives up for the outcome to be
	// unknown: a timeout of seconds lets a busy machine connect and write it (200 ms
	// did not always), and the fake holds its answer far longer than that.
	fake := twiliofake.New(t)
	fake.Delay(time.Minute)
	slow, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL(), Timeout: 3 * time.Second})
	require.NoError(t, err)
	_, err = slow.Text(context.Background(), msg)
	require.ErrorIs(t, err, sms.ErrOutcomeUnknown)

	// A client whose timeout no busy machine reaches: the answer, not the clock, decides.
	// (With the 200 ms client, a loaded 2-core machine under -race sometimes timed out
	// before the fake's error answer arrived.)
	fake.Delay(0)
	fake.FailNext(1, 20500, 500)
	patient, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL(), Timeout: 30 * time.Second})
	require.NoError(t, err)
	_, err = patient.Text(context.Background(), msg)
	require.Error(t, err)
	require.False(t, errors.Is(err, sms.ErrOutcomeUnknown), "Twilio answered: the outcome is known, got %v", err)
}
