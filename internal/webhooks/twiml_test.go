package webhooks_test

import (
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

func TestTwiMLEscapesAndParses(t *testing.T) {
	t.Parallel()
	msg := `Joe's <Barbers> & "Co": pay at https://x.test/?a=1&b=2`
	var got struct {
		XMLName xml.Name `xml:"Response"`
		Message string   `xml:"Message"`
	}
	require.NoError(t, xml.Unmarshal(webhooks.TwiML(msg), &got))
	require.Equal(t, msg, got.Message)
	require.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Response></Response>", string(webhooks.TwiML("")))
}

// TestTwiMLActionEscapesAndParses: the action URL of the answer's <Message> survives XML
// escaping (its query's "&"), method POST; no message, no <Message> and no action.
func TestTwiMLActionEscapesAndParses(t *testing.T) {
	t.Parallel()
	action := "https://x.test/webhooks/twilio/answered?for=SM1&outcome=taken#rc=3&rp=all"
	var got struct {
		XMLName xml.Name `xml:"Response"`
		Message struct {
			Action string `xml:"action,attr"`
			Method string `xml:"method,attr"`
			Text   string `xml:",chardata"`
		}
	}
	require.NoError(t, xml.Unmarshal(webhooks.TwiMLAction("It's taken & gone", action), &got))
	require.Equal(t, action, got.Message.Action)
	require.Equal(t, "POST", got.Message.Method)
	require.Equal(t, "It's taken & gone", got.Message.Text)
	require.Equal(t, string(webhooks.TwiML("")), string(webhooks.TwiMLAction("", action)))
}
