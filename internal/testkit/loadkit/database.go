package loadkit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Database is a database a tool created for its run, and a small pool on it.
type Database struct {
	Name, URL string
	Pool      *pgxpool.Pool
	admin     *pgx.Conn
	logf      func(format string, args ...any)
}

// NewDatabase creates the database name through the admin connection adminURL; logf
// reports a failure to drop it at the end.
func NewDatabase(ctx context.Context, adminURL, name string, logf func(format string, args ...any)) (*Database, error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres (%s): %w; start it, or pass -database-url", RedactURL(adminURL), err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return nil, err
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	if cfg.Password != "" {
		u = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	}
	d := &Database{admin: admin, Name: name, URL: u, logf: logf}
	if d.Pool, err = pgxpool.New(ctx, u+"&pool_max_conns=4"); err != nil {
		d.Drop()
		return nil, err
	}
	return d, nil
}

// Drop closes the pool and drops the database, whoever is still connected to it.
func (d *Database) Drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if d.Pool != nil {
		d.Pool.Close()
	}
	if _, err := d.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.Name}.Sanitize()+" WITH (FORCE)"); err != nil {
		d.logf("could not drop database %s: %v", d.Name, err)
	}
	d.admin.Close(ctx)
}

// RedactURL hides a connection string's credentials.
func RedactURL(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j > 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}
