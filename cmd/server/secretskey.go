package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/logging"
	"github.com/slotrecovery/slotrecovery/internal/migrate"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// secretsRing is SECRETS_KEY's keys, newest first.
func secretsRing(cfg config.Config) (*keyring.Ring, error) {
	r, err := keyring.New(cfg.SecretsKeys...)
	if err != nil {
		return nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	return r, nil
}

// checkSecrets is the start's check of SECRETS_KEY against what is kept under it (the
// webhook secrets sealed, the calendar feeds derived): a setting that leaves out a key
// in use is refused, since those secrets could no longer sign and those addresses no
// longer be shown. Then what an older version kept plain is sealed, and the feeds of
// shops from before migration 0033 derived (their old addresses keep working).
func checkSecrets(ctx context.Context, sh *shops.Service, hk *hooks.Service, log *slog.Logger) error {
	for _, check := range []func(context.Context) error{hk.CheckSecretsKeys, sh.CheckCalendarKeys} {
		if err := check(ctx); err != nil {
			if errors.Is(err, keyring.ErrUnknownKey) {
				err = fmt.Errorf("%w; %s", err, fallbackHint("SECRETS_KEY"))
			}
			return err
		}
	}
	sealed, err := hk.SealPlainSecrets(ctx)
	if err != nil {
		return err
	}
	derived, err := sh.DeriveCalendarTokens(ctx)
	if err != nil {
		return err
	}
	if sealed > 0 || derived > 0 {
		log.Info("secrets sealed at rest", "webhook_endpoints", sealed, "calendar_feeds", derived)
	}
	return nil
}

// fallbackHint is what a refused start adds about name's missing keys: a database that
// ran before the keys were required kept what they protect under ADMIN_TOKEN (whatever
// its value was then), and gets it back by listing that value as an older key.
func fallbackHint(name string) string {
	return fmt.Sprintf("if this database ran before %s was required, ADMIN_TOKEN's value at the time was its key: "+
		"set %s=<new key>,<that value> (docs/operations.md, Moving off ADMIN_TOKEN)", name, name)
}

// secretsKey runs `server secrets-key reencrypt`: every webhook and connector secret is sealed anew
// under SECRETS_KEY's newest key and every calendar feed re-keyed under it (the address
// it replaces keeps working until the owner rotates it), so that the older keys can be
// dropped from the setting.
func secretsKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] != "reencrypt" {
		return fmt.Errorf("usage: server secrets-key reencrypt")
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	ring, err := secretsRing(cfg)
	if err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogLevel)
	pool, err := openPostgres(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrate.Up(ctx, pool, log); err != nil {
		return err
	}
	sh := shops.New(pool, shops.Config{Secrets: ring})
	hk := hooks.New(pool, nil, hooks.Config{Secrets: ring})
	defer hk.Close()
	if err := checkSecrets(ctx, sh, hk, log); err != nil {
		return err
	}
	bk := book.New(pool, sh, nil, book.Config{Secrets: ring, Logger: log})
	if err := bk.CheckConnectorKeys(ctx); err != nil {
		return err
	}
	sealed, err := hk.ResealSecrets(ctx)
	if err != nil {
		return err
	}
	connectors, err := bk.ResealConnectorSecrets(ctx)
	if err != nil {
		return err
	}
	rekeyed, err := sh.RekeyCalendars(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "under SECRETS_KEY's newest key now: %d webhook endpoints' secrets, %d connectors' secrets, %d calendar feeds "+
		"(their previous addresses keep working until rotated); the older keys may be dropped\n", sealed, connectors, rekeyed)
	return nil
}
