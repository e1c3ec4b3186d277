package erasure_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestErasureKeepsNoEnumerableHash: what an erasure keeps of the number (so that the
// person comes back opted out) is no unkeyed hash of it: a SHA-256 of shop id and phone
// is reversed by anyone with the database, trying every number of a region in seconds.
// No row of the shop's tables holds that hash, nor the number (her join request goes;
// her consent event stays as proof without her address and browser).
func TestErasureKeepsNoEnumerableHash(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	cs := customertest.New(t, pool)
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	const number = "+15557310042"
	c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: number, Name: "Ada", SMSOptIn: true})
	require.NoError(t, err)
	// An appointment of hers in the book, with her number (scene set with SQL).
	_, err = pool.Exec(ctx, `INSERT INTO appointments (shop_id, source, external_id, customer_id, phone, customer_name,
		starts_at, duration_minutes, status, source_updated_at, created_at, changed_at)
		VALUES ($1, 'api', 'ada-1', $2, $3, 'Ada', now() + interval '1 day', 30, 'booked', now(), now(), now())`, shop.ID, c.ID, number)
	require.NoError(t, err)
	// She joined from the page: her request and its consent event, with her address.
	_, err = pool.Exec(ctx, `WITH r AS (INSERT INTO join_requests (id, shop_id, phone, name, language, ip, user_agent,
			disclosure_version, disclosure_text, confirmation_body, created_at, expires_at, confirmed_at, customer_id)
		VALUES (gen_random_uuid(), $1, $3, 'Ada', 'en', '203.0.113.7', 'Mozilla/5.0 (Ada)', 'v1', 'I agree', 'A: reply YES',
			now(), now() + interval '1 day', now(), $2) RETURNING id)
		INSERT INTO consent_events (id, shop_id, customer_id, kind, method, at, ip, user_agent, language, confirmation_sid,
			confirmation_body, confirmation_at, join_request_id)
		SELECT gen_random_uuid(), $1, $2, 'opt_in', 'page', now(), '203.0.113.7', 'Mozilla/5.0 (Ada)', 'en', 'SMjoin', 'YES', now(), r.id FROM r`,
		shop.ID, c.ID, number)
	require.NoError(t, err)
	require.NoError(t, eraser(t, pool, cs).Erase(ctx, shop.ID, c.ID))
	var proof int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM consent_events WHERE customer_id = $1 AND ip IS NULL AND user_agent IS NULL`,
		c.ID).Scan(&proof))
	require.Equal(t, 1, proof, "the consent event stays as proof, without her address and browser")
	var joinRows, addresses int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM join_requests),
		(SELECT count(*) FROM consent_events WHERE host(ip) = '203.0.113.7' OR user_agent LIKE '%Ada%')`).Scan(&joinRows, &addresses))
	require.Zero(t, joinRows, "her join request is gone")
	require.Zero(t, addresses)

	sum := sha256.Sum256([]byte(shop.ID.String() + ":" + number))
	unkeyed := hex.EncodeToString(sum[:])
	rows, err := pool.Query(ctx, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for _, table := range tables {
		var found int
		// Each row as text shows a bytea as \x<hex>.
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` t
			WHERE position($1 IN t::text) > 0 OR position($2 IN t::text) > 0`, unkeyed, number).Scan(&found))
		require.Zero(t, found, "table %s holds the number or its unkeyed SHA-256", table)
	}

	// The number still comes back opted out: the erasure is remembered, keyed.
	again, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: number, SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, again.Status())
}

// TestErasureLooksUpByIndex: an erasure finds the customer's texts by shop and number
// through an index, not by scanning every stored text.
func TestErasureLooksUpByIndex(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	// Only a plan that has an index to use leaves the sequential scan.
	_, err = tx.Exec(ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	rows, err := tx.Query(ctx, `EXPLAIN UPDATE inbound_messages SET from_phone = '', body = ''
		WHERE shop_id = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AND from_phone = '+15557310042'`)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	require.NotContains(t, plan, "Seq Scan", plan)
	require.Contains(t, plan, "Index", plan)
}

// TestErasureDeletesTextJobsAndThoseRunningOnceTheyEnd: an erasure deletes the River
// jobs of texts to the customer (their arguments hold the number and the words) in
// every state it can; one running at that moment is deleted by a follow-up job, which
// holds only its id, once it has ended.
func TestErasureDeletesTextJobsAndThoseRunningOnceTheyEnd(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	cs := customertest.New(t, pool)
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	const number, other = "+15557310043", "+15557310044"
	c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: number, Name: "Ada", SMSOptIn: true})
	require.NoError(t, err)

	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	text := func(key, to string, at time.Time) int64 {
		res, err := rc.Insert(ctx, jobs.Text{Key: key, ShopID: shop.ID, From: shop.SMSNumber, To: to, Body: "Hi Ada"},
			&river.InsertOpts{ScheduledAt: at})
		require.NoError(t, err)
		return res.Job.ID
	}
	running := text("running", number, time.Now())
	text("queued", number, time.Now().Add(time.Hour))
	done := text("done", number, time.Now())
	someoneElse := text("other", other, time.Now().Add(time.Hour))
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, running)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'completed', attempt = 1, attempted_at = now(), finalized_at = now() WHERE id = $1`, done)
	require.NoError(t, err)

	require.NoError(t, eraser(t, pool, cs).Erase(ctx, shop.ID, c.ID))
	ids := func(kind string) []int64 {
		rows, err := pool.Query(ctx, `SELECT id FROM river_job WHERE kind = $1 ORDER BY id`, kind)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		return out
	}
	require.Equal(t, []int64{running, someoneElse}, ids("sms_text"), "the queued and the finished text are gone; another's stays")
	var follow struct {
		IDs []int64 `json:"ids"`
	}
	var args []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT args FROM river_job WHERE kind = 'customer_erasure_jobs'`).Scan(&args))
	require.NoError(t, json.Unmarshal(args, &follow))
	require.Equal(t, []int64{running}, follow.IDs)
	require.NotContains(t, string(args), "5557310043")

	// The running text ends; the follow-up runs (now, not in its 15 s) and deletes it.
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, running)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now() WHERE kind = 'customer_erasure_jobs'`)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, &erasure.ForgetTextJobsWorker{})
	worker, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues: map[string]river.QueueConfig{jobs.QueueTexts: {MaxWorkers: 1}}, Workers: workers,
		FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, worker.Start(ctx))
	t.Cleanup(func() { _ = worker.Stop(context.Background()) })
	require.Eventually(t, func() bool {
		var state string
		err := pool.QueryRow(ctx, `SELECT state FROM river_job WHERE kind = 'customer_erasure_jobs'`).Scan(&state)
		return err == nil && state == "completed"
	}, 30*time.Second, 50*time.Millisecond, "the follow-up completes")
	require.Equal(t, []int64{someoneElse}, ids("sms_text"))
}

// TestErasureKeyRotation: the keys of the kept hashes rotate as ERASURE_KEY lists them,
// newest first. A number erased (or STOP'd) under the old key is still recognised while
// the old key is listed after the new one; new records are made under the new key; a
// server that dropped the old key no longer recognises what was kept under it.
func TestErasureKeyRotation(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	oldKey, newKey := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	before := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{oldKey}})
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	const erased, stopped = "+15557310045", "+15557310046"
	c, err := before.Add(ctx, shop.ID, customers.NewCustomer{Phone: erased, SMSOptIn: true})
	require.NoError(t, err)
	require.NoError(t, eraser(t, pool, before).Erase(ctx, shop.ID, c.ID))

	rotated := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{newKey, oldKey}})
	gone, err := rotated.PhoneErased(ctx, shop.ID, erased)
	require.NoError(t, err)
	require.True(t, gone, "kept under the old key, matched with it")
	require.NoError(t, rotated.OptOutNumber(ctx, shop.ID, stopped))
	var underNew int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sms_suppressions WHERE reason = 'stop'`).Scan(&underNew))
	require.Equal(t, 1, underNew)

	onlyNew := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{newKey}})
	gone, err = onlyNew.PhoneErased(ctx, shop.ID, erased)
	require.NoError(t, err)
	require.False(t, gone, "the old key dropped: what it kept is not matched any more")
	back, err := onlyNew.Add(ctx, shop.ID, customers.NewCustomer{Phone: stopped, SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, back.Status(), "the STOP recorded under the new key")
	// A START clears the record under whichever key it was kept.
	require.NoError(t, rotated.OptInNumber(ctx, shop.ID, erased))
	gone, err = before.PhoneErased(ctx, shop.ID, erased)
	require.NoError(t, err)
	require.False(t, gone)
}

// eraser is the erasure service on pool, through an insert-only River client.
func eraser(t *testing.T, pool *pgxpool.Pool, cs *customers.Service) *erasure.Service {
	t.Helper()
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	return erasure.New(pool, cs, rc, erasure.Config{})
}
