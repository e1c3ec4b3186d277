package customers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
)

// The erasure keys' check values. Every key that has been the newest at a start may have
// made suppressions (sms_suppressions), and only that key matches them again: a setting
// of ERASURE_KEY that leaves it out forgets every STOP and erasure recorded under it,
// silently (the numbers would be texted, or imported opted in, again). So the database
// keeps a check value of each such key (erasure_key_checks), and a start is refused
// while one of them matches none of the configured keys. The records cannot be moved to
// a newer key (the numbers are not kept to do it): giving them up is the operator's
// deliberate act, RetireErasureKeys (`server erasure-key retire`).

// erasureCheckLabel is what a key's check value is the HMAC of: a fixed label, so that
// the value says nothing of the key and is no use for testing numbers.
const erasureCheckLabel = "slotrecovery erasure key check v1"

// ErrErasureKeyMissing is CheckErasureKeys' answer when ERASURE_KEY leaves out a key
// that suppressions were recorded under.
var ErrErasureKeyMissing = errors.New("shops: erasure key missing")

func erasureKeyCheck(key []byte) []byte { return keyring.CheckValue(key, erasureCheckLabel) }

// CheckErasureKeys makes sure the configured erasure keys (Config.PhoneKeys, newest
// first) still match every suppression: it returns an error wrapping
// ErrErasureKeyMissing, naming ERASURE_KEY and what to do, when a key that has been the
// newest is not among them. Otherwise it records the newest key's check value, since
// suppressions are made under it from now on. The server calls it at every start, after
// the migrations.
func (s *Service) CheckErasureKeys(ctx context.Context) error {
	configured := make([][]byte, len(s.cfg.PhoneKeys))
	for i, k := range s.cfg.PhoneKeys {
		configured[i] = erasureKeyCheck(k)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.ErasureKeyCheckLock(ctx, tx); err != nil {
			return fmt.Errorf("lock erasure key checks: %w", err)
		}
		stored, err := queries.ErasureKeyCheckList(ctx, tx)
		if err != nil {
			return fmt.Errorf("read erasure key checks: %w", err)
		}
		missing := 0
		for _, c := range stored {
			if !slices.ContainsFunc(configured, func(k []byte) bool { return bytes.Equal(k, c) }) {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%w: ERASURE_KEY lacks %d of the keys that the kept hashes of opted-out and erased "+
				"numbers were made under, so those numbers would no longer be recognised (texted or imported opted in "+
				"again); put the previous keys back after the new one (ERASURE_KEY=new,old), or, to give those records "+
				"up knowingly, run `server erasure-key retire` with the new setting (docs/operations.md, Erasure key)",
				ErrErasureKeyMissing, missing)
		}
		if err := queries.ErasureKeyCheckAdd(ctx, tx, db.ErasureKeyCheckAddParams{
			CheckValue: configured[0], Now: s.cfg.Now().UTC(),
		}); err != nil {
			return fmt.Errorf("record erasure key check: %w", err)
		}
		return nil
	})
}

// RetireErasureKeys gives up the suppressions recorded under keys the configuration no
// longer lists: their check values go, so that the next start accepts the setting, and
// the newest key's is recorded. It returns how many keys it gave up. The records stay
// (a START may still clear one) but are no longer matched.
func (s *Service) RetireErasureKeys(ctx context.Context) (int, error) {
	configured := make([][]byte, len(s.cfg.PhoneKeys))
	for i, k := range s.cfg.PhoneKeys {
		configured[i] = erasureKeyCheck(k)
	}
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.ErasureKeyCheckLock(ctx, tx); err != nil {
			return fmt.Errorf("lock erasure key checks: %w", err)
		}
		var err error
		if n, err = queries.ErasureKeyCheckRetireExcept(ctx, tx, configured); err != nil {
			return fmt.Errorf("retire erasure key checks: %w", err)
		}
		if err := queries.ErasureKeyCheckAdd(ctx, tx, db.ErasureKeyCheckAddParams{
			CheckValue: configured[0], Now: s.cfg.Now().UTC(),
		}); err != nil {
			return fmt.Errorf("record erasure key check: %w", err)
		}
		return nil
	})
	return int(n), err
}
