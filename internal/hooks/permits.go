package hooks

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Attempts in flight are counted in Postgres, across the instances: a shop has PerShop
// permits and each of its endpoints PerEndpoint, and an attempt holds one of each while
// its request is out. A permit is a session-level advisory lock ("webhook_shop:<id>:<n>",
// "webhook_endpoint:<id>:<n>") taken on one connection each instance keeps for them
// (never the pool's: a pooled connection would carry its locks to whoever used it next,
// and holding one per attempt would hold the pool). So:
//
//   - the instances share one count per shop, whichever runs the job;
//   - an instance that dies (killed, host lost) frees its permits when Postgres ends its
//     session: at once on a closed connection, within about a minute on a host that
//     vanished (the session's TCP keepalives, set below);
//   - a session takes a lock it holds again without waiting (advisory locks nest), so
//     the instance remembers which permits its session holds and never asks for those.
//
// If the session breaks, its locks are gone: the attempts still under way are no longer
// counted, and for up to one attempt's timeout a shop may have a few more in flight than
// its cap. Nothing is sent twice for it; the next attempts open a new session.

// permitKeepalive are the session's TCP keepalives, so that Postgres ends the session of
// an instance whose host vanished without closing it (the locks would otherwise hold
// for the operating system's two hours).
var permitKeepalive = map[string]string{
	"tcp_keepalives_idle": "20", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "3",
}

// permitSession is this instance's connection for attempt permits.
type permitSession struct {
	pool *pgxpool.Pool

	mu   sync.Mutex
	conn *pgx.Conn
	gen  int             // which connection the permits in held were taken on
	held map[string]bool // the permits conn holds
}

// take takes a permit of the shop and one of the endpoint, or none: ok is false when
// either has all of its permits taken. release gives them back.
func (s *permitSession) take(ctx context.Context, shopID, endpointID uuid.UUID, perShop, perEndpoint int) (release func(), ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		if err := s.open(ctx); err != nil {
			return nil, false, err
		}
	}
	// The endpoint's first: the narrower, and the one a slow endpoint fills.
	ep, err := s.takeOne(ctx, "webhook_endpoint:"+endpointID.String()+":", perEndpoint)
	if err != nil || ep == "" {
		return nil, false, err
	}
	shop, err := s.takeOne(ctx, "webhook_shop:"+shopID.String()+":", perShop)
	if err != nil || shop == "" {
		if err == nil {
			err = s.releaseLocked(ctx, ep)
		}
		return nil, false, err
	}
	gen := s.gen
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.gen != gen {
			return // that session ended, and its locks with it
		}
		_ = s.releaseLocked(context.WithoutCancel(ctx), shop, ep)
	}, true, nil
}

// takeOne takes the first free permit of prefix's n, "" when all are taken.
func (s *permitSession) takeOne(ctx context.Context, prefix string, n int) (string, error) {
	for i := range n {
		permit := prefix + strconv.Itoa(i)
		if s.held[permit] {
			continue
		}
		taken, err := queries.WebhookPermitTake(ctx, s.conn, permit)
		if err != nil {
			s.drop(ctx)
			return "", fmt.Errorf("take webhook permit: %w", err)
		}
		if taken {
			s.held[permit] = true
			return permit, nil
		}
	}
	return "", nil
}

// releaseLocked gives permits back; on an error the session is dropped (its locks go
// with it).
func (s *permitSession) releaseLocked(ctx context.Context, permits ...string) error {
	for _, permit := range permits {
		delete(s.held, permit)
		if _, err := queries.WebhookPermitRelease(ctx, s.conn, permit); err != nil {
			s.drop(ctx)
			return fmt.Errorf("release webhook permit: %w", err)
		}
	}
	return nil
}

// open connects the session, configured as the pool's connections are, with keepalives.
func (s *permitSession) open(ctx context.Context) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	for k, v := range permitKeepalive {
		cfg.RuntimeParams[k] = v
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect the webhook permits' session: %w", err)
	}
	s.conn, s.held = conn, map[string]bool{}
	s.gen++
	return nil
}

// drop closes the session: Postgres frees every permit it held.
func (s *permitSession) drop(ctx context.Context) {
	if s.conn != nil {
		_ = s.conn.Close(context.WithoutCancel(ctx))
	}
	s.conn, s.held = nil, nil
	s.gen++
}

// close ends the session, if one is open.
func (s *permitSession) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(context.Background())
}
