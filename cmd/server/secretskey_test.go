package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// Two SECRETS_KEY keys (at least 32 characters each, as SECRETS_KEY requires).
const (
	secretsKeyA = "secrets-key-a-0123456789abcdef0123456789"
	secretsKeyB = "secrets-key-b-0123456789abcdef0123456789"
)

// TestSecretsKeyCheckedAtStart: webhook secrets are sealed and calendar feeds derived
// under SECRETS_KEY's newest key. A start whose SECRETS_KEY leaves out a key in use is
// refused, naming SECRETS_KEY and what to do (never the keys); the rotation new,old
// starts; `server secrets-key reencrypt` moves everything to the new key, after which
// the new key alone starts. Unset, the start is refused: ADMIN_TOKEN is no key.
func TestSecretsKeyCheckedAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ringA, err := keyring.New([]byte(secretsKeyA))
	require.NoError(t, err)
	shop, _, err := shops.New(e.pool, shops.Config{Secrets: ringA}).Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	hk := hooks.New(e.pool, nil, hooks.Config{Secrets: ringA})
	t.Cleanup(hk.Close)
	_, _, err = hk.CreateEndpoint(ctx, shop.ID, hooks.NewEndpoint{URL: "https://crm.example.com/hooks"})
	require.NoError(t, err)

	key := func(v string) map[string]string { return map[string]string{"SECRETS_KEY": v} }
	require.NoError(t, e.startStop(key(secretsKeyA)))
	err = e.startStop(key(secretsKeyB))
	require.Error(t, err, "B alone cannot open what A sealed")
	require.Contains(t, err.Error(), "SECRETS_KEY")
	require.Contains(t, err.Error(), "secrets-key reencrypt", "the error says what to do")
	require.NotContains(t, err.Error(), secretsKeyA, "never the keys themselves")
	require.NotContains(t, err.Error(), secretsKeyB, "never the keys themselves")
	require.NoError(t, e.startStop(key(secretsKeyB+","+secretsKeyA)), "the rotation B,A starts")

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(key(secretsKeyB+","+secretsKeyA)), &out, io.Discard))
	require.Contains(t, out.String(), "1 webhook endpoints' secrets, 0 connectors' secrets, 1 calendar feeds")
	require.NoError(t, e.startStop(key(secretsKeyB)), "B alone, once everything moved to it")
	require.Error(t, e.startStop(key(secretsKeyA)), "and A alone is refused now")

	// Without SECRETS_KEY the start is refused, whatever ADMIN_TOKEN is.
	err = e.startStop(key(""))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "SECRETS_KEY is required unless DEV_MODE=1"), err.Error())
}

// legacyToken is the ADMIN_TOKEN of a server from before SECRETS_KEY and ERASURE_KEY
// were required, which ran without them: its value sealed the webhook secrets, derived
// the calendar feeds and hashed the STOPs.
const legacyToken = "legacy-admin-token-0123456789"

// TestMovingOffAdminToken: a database whose secrets, calendar feeds and STOPs were kept
// under ADMIN_TOKEN (the fallback, when the keys were unset) moves to keys of its own as
// docs/operations.md says, without losing any of them: the upgraded server refuses to
// start without the keys and says how; with SECRETS_KEY=new,<token> and
// ERASURE_KEY=new,<token> it starts; `server secrets-key reencrypt` re-seals everything
// under the new key; then SECRETS_KEY is the new key alone and ADMIN_TOKEN changes, and
// the endpoint's secret still signs, the old feed address still serves, and the STOP a
// stranger sent still keeps their number opted out when the owner adds it. The STOPs'
// hashes cannot be re-made (their numbers are not kept), so ERASURE_KEY keeps the old
// value as an older key: without it the start is refused.
func TestMovingOffAdminToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const stranger = "+15557770123"

	// The old server's state, made as it made it: every key was ADMIN_TOKEN's value.
	legacy, err := keyring.New([]byte(legacyToken))
	require.NoError(t, err)
	oldShop, apiKey, err := shops.New(e.pool, shops.Config{Secrets: legacy}).Create(ctx, shops.NewShop{Name: "Old",
		Timezone: "UTC", SMSNumber: "+15555550177", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.NotEmpty(t, oldShop.CalendarToken)
	hk := hooks.New(e.pool, nil, hooks.Config{Secrets: legacy, DevMode: true, AllowPrivate: true})
	t.Cleanup(hk.Close)
	r := hookstest.NewReceiver(t)
	_, secret, err := hk.CreateEndpoint(ctx, oldShop.ID, hooks.NewEndpoint{URL: r.URL(),
		EnabledEvents: []string{hooks.CustomerOptedOut}})
	require.NoError(t, err)
	r.SetSecrets(secret)
	cust, err := customers.New(e.pool, customers.Config{PhoneKeys: [][]byte{[]byte(legacyToken)}})
	require.NoError(t, err)
	require.NoError(t, cust.CheckErasureKeys(ctx), "the old server's start recorded its erasure key")
	require.NoError(t, cust.OptOutNumber(ctx, oldShop.ID, stranger), "a stranger's STOP")

	// The upgrade, with the old setting: refused, naming both keys and the way off.
	vars := map[string]string{"ADMIN_TOKEN": legacyToken, "SECRETS_KEY": "", "ERASURE_KEY": ""}
	err = e.startStop(vars)
	require.Error(t, err)
	for _, name := range []string{"SECRETS_KEY", "ERASURE_KEY"} {
		require.Contains(t, err.Error(), name+"=<new key>,<ADMIN_TOKEN's value>")
	}
	require.NotContains(t, err.Error(), legacyToken, "never the token itself")

	// The new keys alone lose what the old value keeps, and the refusal says so.
	vars = map[string]string{"ADMIN_TOKEN": legacyToken, "SECRETS_KEY": secretsKeyA, "ERASURE_KEY": erasureKeyA}
	err = e.startStop(vars)
	require.Error(t, err)
	require.Contains(t, err.Error(), "ADMIN_TOKEN's value at the time was its key")
	require.NotContains(t, err.Error(), legacyToken)

	// The documented way: the old value after each new key, then re-seal.
	vars["SECRETS_KEY"], vars["ERASURE_KEY"] = secretsKeyA+","+legacyToken, erasureKeyA+","+legacyToken
	require.NoError(t, e.startStop(vars))
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(vars), &out, io.Discard))
	require.Contains(t, out.String(), "1 webhook endpoints' secrets, 0 connectors' secrets, 1 calendar feeds")

	// ADMIN_TOKEN is free to change now; ERASURE_KEY keeps the old value (the STOPs'
	// hashes), SECRETS_KEY does not need it any more.
	after := map[string]string{"ADMIN_TOKEN": adminToken, "SECRETS_KEY": secretsKeyA, "ERASURE_KEY": erasureKeyA,
		"DEV_MODE": "1", "WEBHOOK_ALLOW_PRIVATE": "1"}
	err = e.startStop(after)
	require.Error(t, err, "ERASURE_KEY without the old value would forget the stranger's STOP")
	require.Contains(t, err.Error(), "ERASURE_KEY")
	after["ERASURE_KEY"] = erasureKeyA + "," + legacyToken
	base := e.startWith(after, serveOptions{tuneHooks: fastHooks})
	shop := shopInfo{ID: oldShop.ID.String(), APIKey: apiKey, SMSNumber: oldShop.SMSNumber}

	// The STOP: the owner adds the stranger, opted in; the number stays opted out.
	var added struct {
		Status   string `json:"status"`
		OptedOut bool   `json:"opted_out"`
	}
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/customers", apiKey,
		map[string]any{"phone": stranger, "name": "Stranger", "sms_opt_in": true}, &added))
	require.True(t, added.OptedOut, "the STOP kept under the old value still counts")
	require.Equal(t, "opted_out", added.Status)

	// The calendar feed's old address serves.
	cal, _ := e.feed(base, "/calendar/"+oldShop.CalendarToken+".ics", "")
	require.NotNil(t, cal)

	// The secret: a customer's STOP is delivered, signed with the secret the owner kept.
	c := e.newCustomer(base, shop, "+15557770456", true)
	e.text(base, c.Phone, shop.SMSNumber, "STOP")
	events := r.WaitFor(t, 1, 30*time.Second)
	require.Equal(t, []string{hooks.CustomerOptedOut}, hookstest.Types(events))
	require.Empty(t, r.Unverified(), "every delivery verified with the secret made under ADMIN_TOKEN")
}

// TestDevModeNeedsNoKeys: with DEV_MODE=1 and neither key set, a server starts on a
// sandbox database from before the keys were required, whose secrets and STOPs
// ADMIN_TOKEN kept: the sandbox's fixed key is the newest and ADMIN_TOKEN an older one,
// so nothing is refused, and `server secrets-key reencrypt` moves the secrets to the
// sandbox key. Outside DEV_MODE the same setting is refused, and keys of its own start
// once the sandbox's follow them.
func TestDevModeNeedsNoKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	legacy, err := keyring.New([]byte(adminToken))
	require.NoError(t, err)
	shop, _, err := shops.New(e.pool, shops.Config{Secrets: legacy}).Create(ctx, shops.NewShop{Name: "Sandbox",
		Timezone: "UTC", SMSNumber: "+15555550178", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	hk := hooks.New(e.pool, nil, hooks.Config{Secrets: legacy, DevMode: true, AllowPrivate: true})
	t.Cleanup(hk.Close)
	_, _, err = hk.CreateEndpoint(ctx, shop.ID, hooks.NewEndpoint{URL: "http://127.0.0.1:9/hooks"})
	require.NoError(t, err)
	cust, err := customers.New(e.pool, customers.Config{PhoneKeys: [][]byte{[]byte(adminToken)}})
	require.NoError(t, err)
	require.NoError(t, cust.CheckErasureKeys(ctx))
	require.NoError(t, cust.OptOutNumber(ctx, shop.ID, "+15557770789"))

	unset := map[string]string{"SECRETS_KEY": "", "ERASURE_KEY": ""}
	require.Error(t, e.startStop(unset), "outside DEV_MODE the keys are required")
	dev := map[string]string{"SECRETS_KEY": "", "ERASURE_KEY": "", "DEV_MODE": "1"}
	require.NoError(t, e.startStop(dev))
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(dev), &out, io.Discard))
	require.Contains(t, out.String(), "1 webhook endpoints' secrets, 0 connectors' secrets, 1 calendar feeds")
	require.NoError(t, e.startStop(dev), "and again, now under the sandbox key")

	// Out of DEV_MODE, as docs/operations.md says: the sandbox keys (and the token) after
	// keys of its own.
	const devSecrets, devErasure = "dev-secrets-key-change-me-0123456789abcdef", "dev-erasure-key-change-me-0123456789abcdef"
	require.Error(t, e.startStop(map[string]string{"SECRETS_KEY": secretsKeyA, "ERASURE_KEY": erasureKeyA}))
	require.NoError(t, e.startStop(map[string]string{"SECRETS_KEY": secretsKeyA + "," + devSecrets,
		"ERASURE_KEY": erasureKeyA + "," + devErasure + "," + adminToken}))
}

// TestSecretsKeyReencryptConnectors: `server secrets-key reencrypt` moves the
// connectors' secrets (cal.com's webhook secret, Square's signature key, a feed's
// address) and their API keys to SECRETS_KEY's newest key, beside the webhook
// endpoints' secrets: before it the new key alone is refused, since the connectors'
// deliveries could no longer be verified; after it the new key alone starts and opens
// each of them as given. A second run has nothing left to move.
func TestSecretsKeyReencryptConnectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ringA, err := keyring.New([]byte(secretsKeyA))
	require.NoError(t, err)
	ringB, err := keyring.New([]byte(secretsKeyB))
	require.NoError(t, err)
	// The shop's calendar feed under B already: only the connectors are left under A.
	sh := shops.New(e.pool, shops.Config{Secrets: ringB})
	shop, _, err := sh.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC",
		SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	bkA := book.New(e.pool, sh, nil, book.Config{Secrets: ringA})
	cal, err := bkA.CreateConnector(ctx, shop.ID, book.NewConnector{Kind: connectors.SourceCalcom})
	require.NoError(t, err)
	const sqKey, sqToken = "sq-signature-key-0123", "EAAAl-sandbox-token-1234567890"
	sq, err := bkA.CreateConnector(ctx, shop.ID, book.NewConnector{Kind: connectors.SourceSquare, SignatureKey: sqKey})
	require.NoError(t, err)
	_, err = bkA.SetAPIKey(ctx, shop.ID, sq.Connector.ID, sqToken)
	require.NoError(t, err)
	const calKey = "cal_live_0123456789abcdef"
	_, err = bkA.SetAPIKey(ctx, shop.ID, cal.Connector.ID, calKey)
	require.NoError(t, err)

	key := func(v string) map[string]string { return map[string]string{"SECRETS_KEY": v} }
	err = e.startStop(key(secretsKeyB))
	require.Error(t, err, "B alone cannot open the connectors' secrets A sealed")
	require.Contains(t, err.Error(), "connectors' secrets")

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(key(secretsKeyB+","+secretsKeyA)), &out, io.Discard))
	require.Contains(t, out.String(), "0 webhook endpoints' secrets, 4 connectors' secrets, 0 calendar feeds",
		"two connectors' secrets and their two API keys")
	out.Reset()
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(key(secretsKeyB+","+secretsKeyA)), &out, io.Discard))
	require.Contains(t, out.String(), "0 connectors' secrets", "nothing left under A")
	require.NoError(t, e.startStop(key(secretsKeyB)), "B alone, once the connectors moved to it")

	bkB := book.New(e.pool, sh, nil, book.Config{Secrets: ringB})
	require.NoError(t, bkB.CheckConnectorKeys(ctx))
	r, err := bkB.Receiver(ctx, connectors.SourceCalcom, cal.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, cal.Secret, r.Secret, "cal.com's secret, as the owner pasted it into cal.com")
	r, err = bkB.Receiver(ctx, connectors.SourceSquare, sq.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, sqKey, r.Secret, "Square's signature key")
	var sealed []string
	rows, err := e.pool.Query(ctx, `SELECT secret FROM connectors UNION ALL SELECT api_key FROM connectors`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		sealed = append(sealed, s)
	}
	require.NoError(t, rows.Err())
	require.Len(t, sealed, 4)
	for _, s := range sealed {
		require.NotContains(t, s, sqToken)
		require.NotContains(t, s, calKey)
		require.True(t, strings.HasPrefix(s, "sealed1:"+hex.EncodeToString(ringB.ID())+":"), "sealed under B: %.20s…", s)
	}
}
