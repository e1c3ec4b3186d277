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
