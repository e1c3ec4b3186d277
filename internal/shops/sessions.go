package shops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// An owner signs in to the dashboard with the shop's API key and gets a session: a
// signed cookie that names the shop, a random session id and the key's version. The
// cookie needs no storage to be checked; what must be stored is that a session ended
// before its cookie expired, so that copies of the cookie stop working. That record is
// kept here, in Postgres, not in Redis alone: a Redis that restarts without its data
// must not bring signed-out sessions back.

// EndSession records that the dashboard session sessionID of shopID signed out. expires
// is when its cookie stops working anyway; the record is kept until then and purged
// after. Ending a session twice, or a session of a shop that no longer exists, changes
// nothing.
func (s *Service) EndSession(ctx context.Context, shopID uuid.UUID, sessionID string, expires time.Time) error {
	err := queries.DashboardSessionEnd(ctx, s.pool, db.DashboardSessionEndParams{
		SessionID: sessionID, ShopID: shopID, ExpiresAt: expires, Now: s.cfg.Now(),
	})
	if err != nil {
		return fmt.Errorf("end dashboard session of shop %s: %w", shopID, err)
	}
	return nil
}

// SessionShop returns the shop of the dashboard session sessionID, and whether the
// session ended (EndSession). A shop that does not exist is a problem.NotFound.
func (s *Service) SessionShop(ctx context.Context, shopID uuid.UUID, sessionID string) (shop Shop, ended bool, err error) {
	row, err := queries.DashboardSessionShop(ctx, s.pool, db.DashboardSessionShopParams{SessionID: sessionID, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, false, problem.New(problem.NotFound, "shop_not_found", "no such shop")
	}
	if err != nil {
		return Shop{}, false, fmt.Errorf("get shop %s of a dashboard session: %w", shopID, err)
	}
	shop, err = s.fromRow(row.Shop)
	if err != nil {
		return Shop{}, false, err
	}
	return shop, row.Ended, nil
}
