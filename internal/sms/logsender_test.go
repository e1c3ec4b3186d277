package sms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// lockedBuffer lets parallel tests share nothing but still be race-free if the logger
// is used from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

const (
	shopNumber = "+15555550100"
	customer   = "+15555550167"
)

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

func TestLogSender(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	s := sms.NewLogSender(slog.New(slog.NewJSONHandler(&buf, nil)))

	const body = "Booked! Pay here: https://checkout.example/pay/cs_test_1"
	sid, err := s.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: body, ValidityPeriod: time.Minute})
	require.NoError(t, err)
	require.Regexp(t, `^SMdev[0-9a-f]{29}$`, sid)

	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	require.Equal(t, "sms not sent (dev mode)", rec["msg"])
	require.Equal(t, "+155******00", rec["from"])
	require.Equal(t, "+155******67", rec["to"])
	require.Equal(t, body, rec["body"], "the body is logged so a developer can follow the link")
	require.Equal(t, sid, rec["sid"])
	require.EqualValues(t, 60, rec["validity_seconds"])
	require.NotContains(t, string(buf.Bytes()), customer)
	require.NotContains(t, string(buf.Bytes()), shopNumber)

	other, err := s.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: body})
	require.NoError(t, err)
	require.NotEqual(t, sid, other)
}

func TestLogSenderErrors(t *testing.T) {
	t.Parallel()
	s := sms.NewLogSender(nil) // nil discards

	_, err := s.Text(t.Context(), sms.Message{From: shopNumber, To: customer})
	require.ErrorIs(t, err, sms.ErrInvalidMessage)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.Text(ctx, sms.Message{From: shopNumber, To: customer, Body: "hi"})
	require.ErrorIs(t, err, context.Canceled)
}

// The senders are interchangeable behind the one-method interface their users declare.
var (
	_ texter = (*twilio.Sender)(nil)
	_ texter = (*sms.LogSender)(nil)
)

type texter interface {
	Text(ctx context.Context, m sms.Message) (string, error)
}
