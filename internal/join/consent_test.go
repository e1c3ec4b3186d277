package join_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
)

// TestConsentCSV: the export lists the shop's events in the period with their proof, one
// row each, oldest first, with the number as it is now; a value a spreadsheet would run
// as a formula is defused; events outside the period are left out.
func TestConsentCSV(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	numbers := []string{"+15555550170", "+15555550171", "+15555550172"}
	for i, n := range numbers {
		s := sub(n)
		s.Name = []string{"Ana", "=HYPERLINK(\"http://evil.example\")", "Cy"}[i]
		out, err := f.join.Request(ctx, f.shop, s)
		require.NoError(t, err)
		require.True(t, out.Sent)
		handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: n, Body: "YES", MessageSID: fmt.Sprintf("SM%d", i)})
		require.NoError(t, err)
		require.True(t, handled)
		f.clock.Add(time.Hour)
	}
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	n, err := f.join.WriteCSV(ctx, &buf, f.shop.ID, start, start.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, n, "the third is after the period")
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	require.Equal(t, "+15555550170", rows[1][col["phone"]])
	require.Equal(t, "Ana", rows[1][col["name"]])
	require.Equal(t, "'=HYPERLINK(\"http://evil.example\")", rows[2][col["name"]], "defused")
	require.Equal(t, "opt_in", rows[1][col["kind"]])
	require.Equal(t, "page", rows[1][col["method"]])
	require.Equal(t, "203.0.113.7", rows[1][col["ip"]])
	require.Equal(t, "SM0", rows[1][col["confirmation_message_sid"]])
	require.Equal(t, "YES", rows[1][col["confirmation_body"]])
	require.Equal(t, f.join.Disclosure(f.shop, language.English), rows[1][col["disclosure_text"]])
	require.Equal(t, "false", rows[1][col["asserted_by_owner"]])
	require.Equal(t, "2026-11-29T15:00:00Z", rows[1][col["at"]])
}

// TestCataloguesAreComplete: every language has every message English has, with the
// same placeholders, and the disclosure says what the carriers require.
func TestCataloguesAreComplete(t *testing.T) {
	t.Parallel()
	read := func(l language.Code) map[string]string {
		b, err := os.ReadFile("catalogue/" + string(l) + ".json")
		require.NoError(t, err)
		m := map[string]string{}
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	en := read(language.English)
	for _, l := range language.All {
		m := read(l)
		require.Len(t, m, len(en), l)
		for id, text := range en {
			require.Contains(t, m, id, l)
			require.Equal(t, placeholders(text), placeholders(m[id]), "%s %s", l, id)
		}
		for _, id := range []string{"confirm", "disclosure", "welcome"} {
			require.Contains(t, m[id], "HELP", "%s %s", l, id)
			require.Contains(t, m[id], "STOP", "%s %s", l, id)
		}
	}
	d := join.Words(language.English, "disclosure", "shop", "Joe's Barbers", "per_week", "2")
	for _, must := range []string{"Joe's Barbers", "about 2 a week", "Msg & data rates may apply", "HELP for help",
		"STOP to cancel", "not a condition of purchase"} {
		require.Contains(t, d, must)
	}
	require.Equal(t, "Joe's Barbers: reply YES to get texts when a slot opens (about 2/week). Msg & data rates may apply. HELP for help, STOP to cancel.",
		join.Words(language.English, "confirm", "shop", "Joe's Barbers", "per_week", "2"))
}

func placeholders(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] == '{' {
			j := i + 1
			for j < len(s) && s[j] != '}' {
				j++
			}
			out = append(out, s[i:j+1])
			i = j
		}
	}
	sort.Strings(out)
	return out
}

// TestForgetOnErasure: erasing a joined customer keeps their consent event (the proof)
// and drops the address, the browser and their join requests; the export shows the
// number and the name as erased.
func TestForgetOnErasure(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	const number = "+15555550180"
	out, err := f.join.Request(ctx, f.shop, sub(number))
	require.NoError(t, err)
	require.True(t, out.Sent)
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: number, Body: "yes", MessageSID: "SM1"})
	require.NoError(t, err)
	require.True(t, handled)
	c, err := f.customers.ByPhone(ctx, f.shop.ID, number)
	require.NoError(t, err)

	// What package erasure does in its transaction, with join.Forget beside the rest.
	tx, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	got, err := f.customers.LockForErasure(ctx, tx, f.shop.ID, c.ID)
	require.NoError(t, err)
	require.NoError(t, join.Forget(ctx, tx, f.shop.ID, c.ID, got))
	require.NoError(t, f.customers.Blank(ctx, tx, f.shop.ID, c.ID, got, f.clock.Now()))
	require.NoError(t, tx.Commit(ctx))

	hist, err := f.join.History(ctx, f.shop.ID, c.ID)
	require.NoError(t, err)
	require.Len(t, hist, 1, "the proof stays")
	require.Empty(t, hist[0].IP)
	require.Empty(t, hist[0].UserAgent)
	require.NotNil(t, hist[0].Disclosure)
	require.Equal(t, "SM1", hist[0].Confirmation.MessageSID)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))

	var buf bytes.Buffer
	n, err := f.join.WriteCSV(ctx, &buf, f.shop.ID, f.clock.Now().Add(-time.Hour), f.clock.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	export := buf.String()
	rows, err := csv.NewReader(strings.NewReader(export)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "(erased)", rows[1][2])
	require.Equal(t, "(erased)", rows[1][3])
	require.NotContains(t, export, number)
	require.NotContains(t, export, "203.0.113.7")
}
