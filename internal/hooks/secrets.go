package hooks

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
)

// Signing secrets at rest. Signing needs an endpoint's secret back, so it cannot be kept
// as a hash; it is kept sealed (AES-256-GCM) under the server's SECRETS_KEY
// (Config.Secrets), bound to its shop, in the columns that held it plain before
// migration 0033: "sealed1:<key id>:<base64>". A copy of the database alone signs
// nothing. The newest key seals; any key of the setting opens what it sealed, so a
// rotation of SECRETS_KEY (new,old) loses nothing, and ResealSecrets moves every secret
// to the newest key so the older ones can go. CheckSecretsKeys refuses a setting that
// leaves out a key in use; SealPlainSecrets seals what an older version left plain.

// sealContext binds a sealed secret to its shop: moved to another shop's row, it does
// not open. (Not to its column: a rotation moves the sealed secret to previous_secret.)
func sealContext(shopID uuid.UUID) []byte {
	return []byte("webhook_endpoints.secret:" + shopID.String())
}

func (s *Service) seal(shopID uuid.UUID, secret string) (string, error) {
	v, err := s.cfg.Secrets.Seal([]byte(secret), sealContext(shopID))
	if err != nil {
		return "", fmt.Errorf("seal webhook secret: %w", err)
	}
	return v, nil
}

// open reads a kept secret: sealed, or plain (whsec_…) where an instance of a version
// before 0033 wrote it during a rolling deploy, until the next start seals it.
func (s *Service) open(shopID uuid.UUID, kept string) (string, error) {
	if strings.HasPrefix(kept, SecretPrefix) {
		return kept, nil
	}
	plain, err := s.cfg.Secrets.Open(kept, sealContext(shopID))
	if err != nil {
		return "", fmt.Errorf("the signing secret cannot be read (SECRETS_KEY): %w", err)
	}
	return string(plain), nil
}

// CheckSecretsKeys makes sure SECRETS_KEY (Config.Secrets) holds every key an endpoint's
// secret is sealed under: it returns an error wrapping keyring.ErrUnknownKey, naming
// SECRETS_KEY and what to do, when it does not (those endpoints could no longer be
// signed for). The server calls it at every start, after the migrations.
func (s *Service) CheckSecretsKeys(ctx context.Context) error {
	ids, err := queries.WebhookEndpointSecretKeyIDs(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("read webhook secrets' keys: %w", err)
	}
	if missing := s.cfg.Secrets.Missing(ids); missing > 0 {
		return fmt.Errorf("%w: SECRETS_KEY lacks %d of the keys that webhook endpoints' signing secrets are sealed "+
			"under; put the previous keys back after the new one (SECRETS_KEY=new,old), and run "+
			"`server secrets-key reencrypt` before dropping them (docs/operations.md, Secrets key)",
			keyring.ErrUnknownKey, missing)
	}
	return nil
}

// SealPlainSecrets seals every secret still kept plain (from before migration 0033, or
// written by an older instance during a rolling deploy) under the newest key. The
// server calls it at every start, after CheckSecretsKeys. It returns how many endpoints
// it changed.
func (s *Service) SealPlainSecrets(ctx context.Context) (int, error) {
	return s.reseal(ctx, "sealed1:%")
}

// ResealSecrets seals every secret not sealed under SECRETS_KEY's newest key anew under
// it (`server secrets-key reencrypt`): afterwards the older keys are no longer needed.
// It returns how many endpoints it changed.
func (s *Service) ResealSecrets(ctx context.Context) (int, error) {
	return s.reseal(ctx, "sealed1:"+hex.EncodeToString(s.cfg.Secrets.ID())+":%")
}

// reseal seals anew, under the newest key, the secrets that do not match keep, a batch
// at a time. Each row changes only if its secrets are still the ones read (a rotation
// meanwhile wrote them sealed already).
func (s *Service) reseal(ctx context.Context, keep string) (int, error) {
	n := 0
	for {
		rows, err := queries.WebhookEndpointSecretsToSeal(ctx, s.pool, keep)
		if err != nil {
			return n, fmt.Errorf("list webhook secrets to seal: %w", err)
		}
		if len(rows) == 0 {
			return n, nil
		}
		changed := 0
		for _, r := range rows {
			p := db.WebhookEndpointSetSecretsParams{ID: r.ID, OldSecret: r.Secret, OldPreviousSecret: r.PreviousSecret}
			secret, err := s.open(r.ShopID, r.Secret)
			if err != nil {
				return n, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
			}
			if p.Secret, err = s.seal(r.ShopID, secret); err != nil {
				return n, err
			}
			if r.PreviousSecret.Valid {
				previous, err := s.open(r.ShopID, r.PreviousSecret.String)
				if err != nil {
					return n, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
				}
				sealed, err := s.seal(r.ShopID, previous)
				if err != nil {
					return n, err
				}
				p.PreviousSecret = pgtype.Text{String: sealed, Valid: true}
			}
			k, err := queries.WebhookEndpointSetSecrets(ctx, s.pool, p)
			if err != nil {
				return n, fmt.Errorf("seal secrets of webhook endpoint %s: %w", r.ID, err)
			}
			changed += int(k)
		}
		n += changed
		if changed == 0 {
			// Every row of the batch changed meanwhile; read again, but never spin on
			// rows that keep coming back unchanged.
			return n, errors.New("hooks: webhook secrets changed while being sealed; run it again")
		}
	}
}
