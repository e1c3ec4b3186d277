package join_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a shop with its join service, on a database and key prefix of its own.
type fixture struct {
	pool      *pgxpool.Pool
	shop      shops.Shop
	shops     *shops.Service
	customers *customers.Service
	join      *join.Service
	clock     *clock
	mu        sync.Mutex
	refused   map[string]int
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func setup(t *testing.T, limits join.Limits) *fixture {
	t.Helper()
	pool, _ := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	f := &fixture{pool: pool, clock: &clock{now: time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)}, refused: map[string]int{}}
	f.shops = shops.New(pool, shops.Config{})
	f.shop, _, err = f.shops.Create(context.Background(), shops.NewShop{Name: "Joe's Barbers", Timezone: "America/New_York",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	// The owner's opt-ins and opt-outs go to the consent record, as the server wires it.
	f.customers = customertest.NewWith(t, pool, customers.Config{Consent: join.OwnerConsent{}})
	limits.Limiter = ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	f.join = join.New(pool, queue, f.customers, join.Config{Now: f.clock.Now, Limits: limits, Refused: func(reason string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.refused[reason]++
	}})
	return f
}

func (f *fixture) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (f *fixture) texts(t *testing.T, to string) []string {
	t.Helper()
	rows, err := f.pool.Query(context.Background(),
		`SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1 ORDER BY id`, to)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var b string
		require.NoError(t, rows.Scan(&b))
		out = append(out, b)
	}
	require.NoError(t, rows.Err())
	return out
}

func sub(number string) join.Submission {
	return join.Submission{Name: "Ana", Phone: number, Consent: true, IP: netip.MustParseAddr("203.0.113.7"), UserAgent: "Mozilla/5.0 (iPhone)"}
}

// TestRequestAndConfirm: a submission stores a request and texts the confirmation in the
// visitor's language, and creates no customer; the number's YES makes it an opted-in
// customer with the request's name and language, records the consent with its proof,
// and texts the welcome; a second YES changes nothing more.
func TestRequestAndConfirm(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	s := sub("(555) 555-0123")
	s.Language = language.Spanish
	out, err := f.join.Request(ctx, f.shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent, out.Refused)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM customers`), "a request is no customer")
	texts := f.texts(t, "+15555550123")
	require.Len(t, texts, 1)
	require.Contains(t, texts[0], "Joe's Barbers: responde SI")
	require.Contains(t, texts[0], "2/semana")

	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550123", Body: "maybe later", MessageSID: "SM0"})
	require.NoError(t, err)
	require.False(t, handled, "not an affirmative")
	handled, err = f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550999", Body: "YES", MessageSID: "SM1"})
	require.NoError(t, err)
	require.False(t, handled, "no request from that number")

	handled, err = f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550123", Body: "Sí!", MessageSID: "SM2"})
	require.NoError(t, err)
	require.True(t, handled)
	c, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550123")
	require.NoError(t, err)
	require.True(t, c.SMSOptIn)
	require.Nil(t, c.OptedOutAt)
	require.Equal(t, "Ana", c.Name)
	require.Equal(t, language.Spanish, c.Language)
	texts = f.texts(t, "+15555550123")
	require.Len(t, texts, 2)
	require.Contains(t, texts[1], "ya estas en la lista")

	hist, err := f.join.History(ctx, f.shop.ID, c.ID)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	e := hist[0]
	require.Equal(t, join.KindOptIn, e.Kind)
	require.Equal(t, join.MethodPage, e.Method)
	require.Equal(t, "203.0.113.7", e.IP)
	require.Equal(t, "Mozilla/5.0 (iPhone)", e.UserAgent)
	require.Equal(t, "es", e.Language)
	require.NotNil(t, e.Disclosure)
	require.Equal(t, join.DisclosureVersion, e.Disclosure.Version)
	require.Equal(t, f.join.Disclosure(f.shop, language.Spanish), e.Disclosure.Text)
	require.Len(t, e.Disclosure.SHA256, 64)
	require.NotNil(t, e.Confirmation)
	require.Equal(t, "SM2", e.Confirmation.MessageSID)
	require.Equal(t, "Sí!", e.Confirmation.Body)
	require.False(t, e.AssertedByOwner)

	handled, err = f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550123", Body: "YES", MessageSID: "SM3"})
	require.NoError(t, err)
	require.False(t, handled, "the request is confirmed: a later YES is the inbound path's as any")
	require.Len(t, f.texts(t, "+15555550123"), 2)
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM consent_events`))
}

// TestConfirmExisting: a number that is a customer already, opted out by its own STOP,
// joins again by its YES: opted in again, its name kept, its language the request's.
func TestConfirmExisting(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	c, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550124", Name: "Bo", SMSOptIn: true})
	require.NoError(t, err)
	require.NoError(t, f.customers.OptOutNumber(ctx, f.shop.ID, "+15555550124"))
	s := sub("+15555550124")
	s.Name = "Robert"
	s.Language = language.French
	out, err := f.join.Request(ctx, f.shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent)
	require.Contains(t, f.texts(t, "+15555550124")[0], "répondez OUI")
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550124", Body: "oui", MessageSID: "SM9"})
	require.NoError(t, err)
	require.True(t, handled)
	got, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550124")
	require.NoError(t, err)
	require.Equal(t, c.ID, got.ID)
	require.True(t, got.SMSOptIn)
	require.Nil(t, got.OptedOutAt)
	require.Equal(t, "Bo", got.Name, "the customer's name is the owner's")
	require.Equal(t, language.French, got.Language)
}

// TestRequestExpires: a request not confirmed within 24 hours is not confirmed by a
// later YES and leaves no customer; Purge forgets it.
func TestRequestExpires(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	out, err := f.join.Request(ctx, f.shop, sub("+15555550125"))
	require.NoError(t, err)
	require.True(t, out.Sent)
	f.clock.Add(join.RequestTTL + time.Second)
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550125", Body: "YES", MessageSID: "SM1"})
	require.NoError(t, err)
	require.False(t, handled)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM customers`))
	n, err := join.Purge(ctx, f.pool, f.clock.Now(), 100)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))
}

// TestRequestFieldErrors: a wrong field is named, and nothing is stored or sent.
func TestRequestFieldErrors(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	s := join.Submission{Name: strings.Repeat("n", join.MaxName+1), Phone: "call me", Consent: false}
	_, err := f.join.Request(ctx, f.shop, s)
	var fe join.FieldErrors
	require.ErrorAs(t, err, &fe)
	require.Equal(t, join.FieldErrors{"name": "error_name", "phone": "error_phone", "consent": "error_consent"}, fe)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM river_job`))
}

// TestConfirmConcurrent: the same number's YES sent several times at once makes one
// customer, one consent event and one welcome. Each is handled, except one that reads
// the request after another confirmed it: that one is any text from a customer.
func TestConfirmConcurrent(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	const number = "+15555550190"
	out, err := f.join.Request(ctx, f.shop, sub(number))
	require.NoError(t, err)
	require.True(t, out.Sent)
	const n = 4
	type answer struct {
		handled bool
		err     error
	}
	answers := make(chan answer, n)
	start := make(chan struct{})
	for i := range n {
		go func() {
			<-start
			h, err := f.join.Confirm(ctx, f.shop, join.Reply{From: number, Body: "YES", MessageSID: fmt.Sprintf("SM%d", i)})
			answers <- answer{h, err}
		}()
	}
	close(start)
	handled := 0
	for range n {
		a := <-answers
		require.NoError(t, a.err)
		if a.handled {
			handled++
		}
	}
	require.GreaterOrEqual(t, handled, 1)
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM customers WHERE phone = $1`, number))
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM consent_events`))
	require.Len(t, f.texts(t, number), 2, "the confirmation and one welcome")
}

// TestConfirmationSegments: under the shop's default GSM-7 setting the Spanish
// confirmation drops the accents GSM-7 lacks (SÍ, estás) where that makes it fewer
// segments; a shop that keeps every accent gets them.
func TestConfirmationSegments(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	s := sub("+15555550195")
	s.Language = language.Spanish
	out, err := f.join.Request(ctx, f.shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent)
	folded := f.texts(t, "+15555550195")[0]
	require.Contains(t, folded, "responde SI ")
	require.True(t, sms.IsGSM7(folded), folded)

	exact := shops.GSM7Exact
	shop, err := f.shops.Update(ctx, f.shop.ID, shops.ShopChange{GSM7: &exact})
	require.NoError(t, err)
	s.Phone = "+15555550196"
	out, err = f.join.Request(ctx, shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent)
	require.Contains(t, f.texts(t, "+15555550196")[0], "responde SÍ ")
}

// TestCampaignWords: what a shop's campaign registers of its join flow: the three
// keywords, and the confirmation as the shop's number texts it.
func TestCampaignWords(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	require.Equal(t, []string{"INSCRIRE", "JOIN", "UNIRME"}, join.Keywords())
	for _, k := range join.Keywords() {
		_, ok := join.Keyword(shops.Shop{}, k)
		require.True(t, ok, k)
	}
	got := f.join.Confirmation(f.shop)
	require.Equal(t, join.Words(f.shop.Language, "confirm", "shop", f.shop.Name, "per_week", "2"), got)
	require.Contains(t, got, "YES")
}
