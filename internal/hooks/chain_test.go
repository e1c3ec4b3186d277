package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// TestOpeningEventShowsItsChain: an opening a move-up freed carries its chain (id,
// position, moved_from) in its events; any other opening's event leaves chain out.
func TestOpeningEventShowsItsChain(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	s.endpoint(hookstest.NewReceiver(t), hooks.OpeningDeclared)
	startsAt := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	plain := s.opening(s.shop, startsAt)
	chained := s.opening(s.shop, startsAt.Add(time.Hour))
	chainID, movedFrom := uuid.New(), uuid.New()
	_, err := s.pool.Exec(ctx, `UPDATE slot_openings SET chain_id = $2, chain_position = 3, chain_moved_from = $3 WHERE id = $1`,
		chained, chainID, movedFrom)
	require.NoError(t, err)
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningDeclared, time.Now(), plain, uuid.Nil))
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningDeclared, time.Now(), chained, uuid.Nil))
	_, subs := s.subjects()
	require.Len(t, subs, 2)
	require.Nil(t, subs[0].Chain)
	require.Equal(t, &api.Chain{ID: chainID, Position: 3, MovedFrom: movedFrom}, subs[1].Chain)
}
