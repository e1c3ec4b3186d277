package shops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// requireLanguageProblem: err refuses a language, naming the field and every code.
func requireLanguageProblem(t *testing.T, err error) {
	t.Helper()
	p, ok := problem.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, problem.Invalid, p.Kind)
	require.Equal(t, "language", p.Field)
	require.Equal(t, "invalid_language", p.Code)
	require.Contains(t, p.Message, "en, es, fr")
}

func TestParseLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want language.Code
		ok   bool
	}{
		{"en", language.English, true},
		{"es", language.Spanish, true},
		{"FR", language.French, true},
		{" Es ", language.Spanish, true},
		{"", "", false},
		{"  ", "", false},
		{"de", "", false},
		{"english", "", false},
		{"es-MX", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := shops.ParseLanguage(tt.in)
			if !tt.ok {
				requireLanguageProblem(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestShopLanguage: a new shop texts in English unless it says otherwise; a change takes
// any case and stores the code in lower case; anything else is refused, changing nothing.
func TestShopLanguage(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	newShop := func(sms string, lang language.Code) shops.NewShop {
		return shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: sms, Currency: "usd", PaymentMode: shops.PaymentNone, Language: lang}
	}
	create := []struct {
		name string
		lang language.Code
		want language.Code
	}{
		{"default", "", language.English},
		{"spanish", "es", language.Spanish},
		{"upper case", "FR", language.French},
	}
	for i, tt := range create {
		shop, _, err := svc.Create(ctx, newShop("+1555555010"+string(rune('0'+i)), tt.lang))
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.want, shop.Language, tt.name)
		got, err := svc.Get(ctx, shop.ID)
		require.NoError(t, err)
		require.Equal(t, tt.want, got.Language, tt.name+": stored")
	}
	_, _, err := svc.Create(ctx, newShop("+15555550109", "de"))
	requireLanguageProblem(t, err)

	shop, _, err := svc.Create(ctx, newShop("+15555550110", ""))
	require.NoError(t, err)
	code := func(c language.Code) *language.Code { return &c }
	change := []struct {
		name string
		lang *language.Code
		want language.Code
		bad  bool
	}{
		{"to spanish, any case", code(" ES "), language.Spanish, false},
		{"left out: unchanged", nil, language.Spanish, false},
		{"unsupported", code("pt"), language.Spanish, true},
		{"to french", code("fr"), language.French, false},
	}
	for _, tt := range change {
		got, err := svc.Update(ctx, shop.ID, shops.ShopChange{Language: tt.lang})
		if tt.bad {
			requireLanguageProblem(t, err)
		} else {
			require.NoError(t, err, tt.name)
			require.Equal(t, tt.want, got.Language, tt.name)
		}
		stored, err := svc.Get(ctx, shop.ID)
		require.NoError(t, err)
		require.Equal(t, tt.want, stored.Language, tt.name+": stored")
	}
}

// TestCustomerLanguage: a customer is in the shop's language ("") until the owner says
// otherwise; a change to "" puts them back in the shop's; nil leaves it; a bad code is
// refused and changes nothing.
func TestCustomerLanguage(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	cs := customertest.New(t, pool)
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd",
		PaymentMode: shops.PaymentNone, Language: language.French})
	require.NoError(t, err)

	add := []struct {
		phone string
		lang  language.Code
		want  language.Code
	}{
		{"+15555550121", "", ""},
		{"+15555550122", "es", language.Spanish},
		{"+15555550123", "EN", language.English},
	}
	for _, tt := range add {
		c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: tt.phone, Language: tt.lang})
		require.NoError(t, err, tt.phone)
		require.Equal(t, tt.want, c.Language, tt.phone)
		require.Equal(t, tt.want, storedLanguage(t, pool, c.ID), tt.phone)
	}
	_, err = cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550124", Language: "de"})
	requireLanguageProblem(t, err)

	c, err := cs.ByPhone(ctx, shop.ID, "+15555550121")
	require.NoError(t, err)
	code := func(c language.Code) *language.Code { return &c }
	name := "Ana"
	tests := []struct {
		name   string
		change customers.Change
		want   language.Code
		bad    bool
	}{
		{"set, any case", customers.Change{Language: code("Es")}, language.Spanish, false},
		{"another field: unchanged", customers.Change{Name: &name}, language.Spanish, false},
		{"unsupported", customers.Change{Language: code("xx")}, language.Spanish, true},
		{"back to the shop's", customers.Change{Language: code("")}, "", false},
		{"again", customers.Change{Language: code("fr")}, language.French, false},
	}
	for _, tt := range tests {
		got, err := cs.Update(ctx, shop.ID, c.ID, tt.change)
		if tt.bad {
			requireLanguageProblem(t, err)
		} else {
			require.NoError(t, err, tt.name)
			require.Equal(t, tt.want, got.Language, tt.name)
		}
		require.Equal(t, tt.want, storedLanguage(t, pool, c.ID), tt.name)
	}

	// An erasure forgets the language with the rest of what the owner knew of them.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	require.NoError(t, erasure.New(pool, cs, rc, erasure.Config{}).Erase(ctx, shop.ID, c.ID))
	require.Equal(t, language.Code(""), storedLanguage(t, pool, c.ID))
}

// storedLanguage is the customer's language column ("" for NULL).
func storedLanguage(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) language.Code {
	t.Helper()
	var s *string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT language FROM customers WHERE id = $1`, id).Scan(&s))
	if s == nil {
		return ""
	}
	require.NotEmpty(t, *s, "a customer in the shop's language is NULL, never ''")
	return language.Code(*s)
}

// TestImportLanguageColumn: the optional language column sets a new customer's language
// (empty: the shop's), changes an existing one's (empty: left as it is), and rejects a
// line with an unsupported code, naming the column.
func TestImportLanguageColumn(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	cs := customertest.New(t, pool)
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	run := func(file string) customers.ImportReport {
		t.Helper()
		rep, err := cs.Import(ctx, shop.ID, strings.NewReader(file))
		require.NoError(t, err)
		return rep
	}
	lang := func(phone string) language.Code {
		t.Helper()
		c, err := cs.ByPhone(ctx, shop.ID, phone)
		require.NoError(t, err)
		require.Equal(t, c.Language, storedLanguage(t, pool, c.ID))
		return c.Language
	}

	rep := run("phone,name,language\n" +
		"+15555550131,Ana,es\n" +
		"+15555550132,Ben,\n" +
		"+15555550133,Cy, FR \n" +
		"+15555550134,Dee,de\n" +
		"+15555550135,Eve,spanish\n")
	require.Equal(t, 3, rep.Created)
	require.Equal(t, 2, rep.Rejected)
	for _, row := range rep.Rows[3:] {
		require.Equal(t, customers.ImportRejected, row.Result)
		require.Equal(t, "language must be one of en, es, fr (left empty: the shop's language, or unchanged)", row.Reason)
	}
	require.Equal(t, language.Spanish, lang("+15555550131"))
	require.Equal(t, language.Code(""), lang("+15555550132"), "empty: the shop's")
	require.Equal(t, language.French, lang("+15555550133"))

	// Again, with changes: an empty cell leaves Ana's; Ben gets one; Cy's changes; a file
	// without the column leaves everyone's.
	rep = run("phone,language\n+15555550131,\n+15555550132,EN\n+15555550133,es\n")
	require.Equal(t, []string{customers.ImportUnchanged, customers.ImportUpdated, customers.ImportUpdated},
		[]string{rep.Rows[0].Result, rep.Rows[1].Result, rep.Rows[2].Result})
	require.Equal(t, language.Spanish, lang("+15555550131"), "empty: unchanged")
	require.Equal(t, language.English, lang("+15555550132"))
	require.Equal(t, language.Spanish, lang("+15555550133"))
	rep = run("phone,name\n+15555550131,Ana\n+15555550133,Cy\n")
	require.Equal(t, 2, rep.Unchanged)
	require.Equal(t, language.Spanish, lang("+15555550131"))

	// The same file twice changes nothing the second time.
	rep = run("phone,language\n+15555550132,en\n")
	require.Equal(t, 1, rep.Unchanged)
}
