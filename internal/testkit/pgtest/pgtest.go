// Package pgtest gives each test its own Postgres database, built from the real
// migrations, on the machine's shared server.
//
// The first call in a test binary migrates a template database; every test then gets a
// copy (CREATE DATABASE ... TEMPLATE), which takes tens of milliseconds, and drops it at
// cleanup. Tests never share rows and never touch databases they did not make. Call
// Main from TestMain so the template is dropped when the binary ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/migrate"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// poolMaxConns caps the pool New returns. Tests run in parallel on a shared server
// (max_connections is often 100); pgxpool's default, max(4, GOMAXPROCS) per pool, would
// let a many-core machine exhaust it.
const poolMaxConns = 4

const howToStart = "start Postgres with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` " +
	"(or run `scripts/services.sh`), or point TEST_DATABASE_URL at a server where this role may CREATE DATABASE"

var (
	tplOnce sync.Once
	tplName string
	tplErr  error
	// createMu serialises CREATE DATABASE ... TEMPLATE: Postgres refuses to copy a
	// template while another session is connected to it, and copies take that lock.
	createMu sync.Mutex
	// inMain is set by Main: without it nobody drops the template when the binary ends,
	// and every run would leave a database behind on the shared server.
	inMain bool
)

// AdminURL is the server-level connection string tests use to create databases.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Main runs the tests and then drops the template database this binary made.
func Main(m *testing.M) {
	inMain = true
	code := m.Run()
	if tplName != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if conn, err := pgx.Connect(ctx, AdminURL()); err == nil {
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{tplName}.Sanitize()+" WITH (FORCE)")
			_ = conn.Close(ctx)
		}
		cancel()
	}
	os.Exit(code)
}

// New makes a fresh migrated database for t and returns a pool on it, of at most
// poolMaxConns connections, and its URL (for servers the test starts, which size their
// own pools: the URL carries no cap). Both are cleaned up with the test.
func New(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	if !inMain {
		t.Fatal("pgtest: the package's TestMain must be pgtest.Main, which drops the template database this binary makes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tplOnce.Do(func() { tplName, tplErr = makeTemplate(ctx) })
	if tplErr != nil {
		t.Fatalf("pgtest: %v", tplErr)
	}

	name := "slotrec_test_" + randomHex(8)
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v; %s", redact(AdminURL()), err, howToStart)
	}
	defer admin.Close(ctx)
	createMu.Lock()
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tplName}.Sanitize())
	createMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dbURL := withDatabase(AdminURL(), name)
	pool, err := pgxpool.New(ctx, withPoolCap(dbURL, poolMaxConns))
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return pool, dbURL
}

func makeTemplate(ctx context.Context) (string, error) {
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w; %s", redact(AdminURL()), err, howToStart)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("slotrec_tpl_%d_%s", os.Getpid(), randomHex(4))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create template database: %w", err)
	}
	pool, err := pgxpool.New(ctx, withDatabase(AdminURL(), name))
	if err != nil {
		return "", fmt.Errorf("open template: %w", err)
	}
	defer pool.Close()
	if err := migrate.Up(ctx, pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	return name, nil
}

func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(fmt.Sprintf("pgtest: bad TEST_DATABASE_URL: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

// withPoolCap returns dbURL with pool_max_conns=n in its query. It is a pgxpool
// setting, not a Postgres one: only pgxpool may be given the result.
func withPoolCap(dbURL string, n int) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic(fmt.Sprintf("pgtest: bad TEST_DATABASE_URL: %v", err))
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(n))
	u.RawQuery = q.Encode()
	return u.String()
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "TEST_DATABASE_URL"
	}
	return u.Redacted()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
