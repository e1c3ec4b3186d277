package shops

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// A shop's calendar feed address is not kept: its token is derived, "cal_" and the hex
// of an HMAC of the shop's id and its calendar generation under a key of the server's
// SECRETS_KEY (Config.Secrets; the shop's row names which key, calendar_key_id), and
// only the token's SHA-256 is stored, by which a request finds the shop. A copy of the
// database alone gives no one a shop's calendar. Rotating the address takes the next
// generation; re-keying it (RekeyCalendars, after a rotation of SECRETS_KEY) too, but
// keeps the address it replaces working until the owner rotates or for
// OldCalendarAddressLasts (its hash kept as the legacy one), so subscribed calendars do
// not break at once because the server's key changed.

// calendarTokenPrefix marks calendar feed tokens, as keyPrefix marks API keys.
const calendarTokenPrefix = "cal_"

// ErrCalendarNotFound means no shop has that calendar token (never made, or rotated
// away). The feed answers it with a plain 404: a guess learns nothing.
var ErrCalendarNotFound = problem.New(problem.NotFound, "not_found", "no such resource")

// calendarToken derives the feed token of shop id at generation under the key keyID.
func (s *Service) calendarToken(id uuid.UUID, generation int32, keyID []byte) (string, error) {
	mac, err := s.cfg.Secrets.Derive(keyID, []byte("calendar feed"), id[:], []byte(strconv.Itoa(int(generation))))
	if err != nil {
		return "", fmt.Errorf("derive calendar token of shop %s: %w", id, err)
	}
	return calendarTokenPrefix + hex.EncodeToString(mac), nil
}

func hashCalendarToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// withCalendarToken sets shop.CalendarToken, derived from what its row says.
func (s *Service) withCalendarToken(shop Shop) Shop {
	if shop.calendarKeyID == nil {
		return shop // not derived yet: the server derives every shop's at start
	}
	if t, err := s.calendarToken(shop.ID, shop.calendarGeneration, shop.calendarKeyID); err == nil {
		shop.CalendarToken = t
	}
	return shop
}

// ByCalendarToken finds the shop whose calendar feed token is token. It reads Postgres on
// every call (no cache), so a rotated token fails from the rotation's commit on, on every
// instance. The lookup is by the token's hash, so its timing tells nothing of the token.
func (s *Service) ByCalendarToken(ctx context.Context, token string) (Shop, error) {
	if !strings.HasPrefix(token, calendarTokenPrefix) || len(token) > 100 {
		return Shop{}, ErrCalendarNotFound
	}
	hash := hashCalendarToken(token)
	row, err := queries.ShopGetByCalendarTokenHash(ctx, s.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrCalendarNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("find shop by calendar token: %w", err)
	}
	current := subtle.ConstantTimeCompare(row.CalendarTokenHash, hash) == 1
	old := subtle.ConstantTimeCompare(row.CalendarLegacyTokenHash, hash) == 1
	if !current && (!old || row.CalendarLegacyUntil == nil || !s.cfg.Now().Before(*row.CalendarLegacyUntil)) {
		return Shop{}, ErrCalendarNotFound
	}
	return s.fromRow(row)
}

// OldCalendarAddressLasts is how long a feed address replaced by a re-key (or kept from
// before hashed addresses) keeps working: long enough for calendar apps, which refresh
// a subscription every few hours to a day, and for the owner to read the dashboard's
// notice and subscribe anew.
const OldCalendarAddressLasts = 90 * 24 * time.Hour

// oldAddressUntil is when the shop's kept previous feed address stops working (nil: it
// has none).
func oldAddressUntil(r *db.Shop) *time.Time {
	if len(r.CalendarLegacyTokenHash) == 0 || r.CalendarLegacyUntil == nil {
		return nil
	}
	t := r.CalendarLegacyUntil.UTC()
	return &t
}

// RotateCalendarToken gives the shop a new calendar feed address; the old one (and any
// kept from before a re-key) stops working when this returns, on every instance
// (ByCalendarToken reads Postgres).
func (s *Service) RotateCalendarToken(ctx context.Context, id uuid.UUID) (Shop, error) {
	for {
		row, err := queries.ShopGet(ctx, s.pool, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return Shop{}, ErrShopNotFound
		}
		if err != nil {
			return Shop{}, fmt.Errorf("rotate calendar token of shop %s: %w", id, err)
		}
		updated, err := s.setCalendarToken(ctx, id, row.CalendarGeneration, false)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // a concurrent rotation took the generation: take the next
		}
		if err != nil {
			return Shop{}, err
		}
		return s.fromRow(updated)
	}
}

// setCalendarToken derives the shop's address for the generation after current under
// the newest key and stores its hash; pgx.ErrNoRows when the generation moved meanwhile.
func (s *Service) setCalendarToken(ctx context.Context, id uuid.UUID, current int32, keepOld bool) (db.Shop, error) {
	keyID := s.cfg.Secrets.ID()
	token, err := s.calendarToken(id, current+1, keyID)
	if err != nil {
		return db.Shop{}, err
	}
	row, err := queries.ShopSetCalendarToken(ctx, s.pool, db.ShopSetCalendarTokenParams{
		ID: id, Generation: current + 1, KeyID: keyID, TokenHash: hashCalendarToken(token), KeepOld: keepOld,
		LegacyUntil: s.cfg.Now().Add(OldCalendarAddressLasts).UTC()})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return db.Shop{}, fmt.Errorf("set calendar token of shop %s: %w", id, err)
	}
	return row, err
}

// newCalendarToken is a new shop's first feed token (generation 1, the newest key) and
// its hash.
func (s *Service) newCalendarToken(id uuid.UUID) (keyID, hash []byte, err error) {
	keyID = s.cfg.Secrets.ID()
	token, err := s.calendarToken(id, 1, keyID)
	if err != nil {
		return nil, nil, err
	}
	return keyID, hashCalendarToken(token), nil
}

// CheckCalendarKeys makes sure SECRETS_KEY (Config.Secrets) holds every key a feed
// address is derived under: it returns an error wrapping keyring.ErrUnknownKey, naming
// SECRETS_KEY and what to do, when it does not (those addresses could no longer be
// shown). The server calls it at every start, after the migrations.
func (s *Service) CheckCalendarKeys(ctx context.Context) error {
	ids, err := queries.ShopCalendarKeyIDs(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("read calendar feeds' keys: %w", err)
	}
	missing := 0
	for _, id := range ids {
		if !s.cfg.Secrets.Has(id) {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("%w: SECRETS_KEY lacks %d of the keys that shops' calendar feed addresses are derived "+
			"under; put the previous keys back after the new one (SECRETS_KEY=new,old), and run "+
			"`server secrets-key reencrypt` before dropping them (docs/operations.md, Secrets key)",
			keyring.ErrUnknownKey, missing)
	}
	return nil
}

// DeriveCalendarTokens gives every shop whose feed address is not derived yet (a shop
// from before migration 0033) its derived address, keeping the one it had working. The
// server calls it at every start, after CheckCalendarKeys. It returns how many it
// derived.
func (s *Service) DeriveCalendarTokens(ctx context.Context) (int, error) {
	return s.rekeyCalendars(ctx, true)
}

// RekeyCalendars gives every shop whose feed address is derived under a key other than
// SECRETS_KEY's newest (or not derived yet) a new address under the newest, keeping the
// one it replaces working until the owner rotates: afterwards the older keys are no
// longer needed. It returns how many it moved.
func (s *Service) RekeyCalendars(ctx context.Context) (int, error) {
	return s.rekeyCalendars(ctx, false)
}

func (s *Service) rekeyCalendars(ctx context.Context, onlyUnderived bool) (int, error) {
	n := 0
	for {
		rows, err := queries.ShopCalendarToRekey(ctx, s.pool, db.ShopCalendarToRekeyParams{
			OnlyUnderived: onlyUnderived, KeyID: s.cfg.Secrets.ID()})
		if err != nil {
			return n, fmt.Errorf("list calendar feeds to re-key: %w", err)
		}
		if len(rows) == 0 {
			return n, nil
		}
		for _, r := range rows {
			// A concurrent rotation (ErrNoRows) is under the newest key already.
			if _, err := s.setCalendarToken(ctx, r.ID, r.CalendarGeneration, true); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return n, err
			}
			n++
		}
	}
}

// secretsOrRandom is Config.Secrets, or a random ring for a Service configured without
// (tests): what it derives lives as long as the process.
func secretsOrRandom(r *keyring.Ring) *keyring.Ring {
	if r == nil {
		return keyring.Random()
	}
	return r
}
