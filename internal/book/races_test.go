package book_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// The three races docs/book.md named when the opening was declared after the book's
// transaction committed, each closed now that the change, its claim, the checks, the
// opening and its record are one transaction holding the appointment's row lock.

// TestNoDeclarationOutsideTheTransaction: the package changes openings only through
// slots.Service.DeclareTx, slots.CancelTx and (a move-up's booking) slots.Service.ClaimTx,
// which take the caller's transaction; the
// calls that open their own (Declare, Cancel, and anything else of slots.Service but
// reads) appear nowhere in it. So no path can declare or withdraw an opening apart from
// the change that makes it necessary, and no crash can fall between the two.
func TestNoDeclarationOutsideTheTransaction(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	reads := map[string]bool{"Get": true, "List": true}
	seen := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// s.openings.M: the *slots.Service the book was given.
			if recv, ok := sel.X.(*ast.SelectorExpr); ok && recv.Sel.Name == "openings" {
				seen[sel.Sel.Name]++
				require.True(t, sel.Sel.Name == "DeclareTx" || sel.Sel.Name == "ClaimTx" || reads[sel.Sel.Name],
					"%s: openings.%s runs outside the book's transaction; use DeclareTx or slots.CancelTx in it",
					fset.Position(sel.Pos()), sel.Sel.Name)
			}
			// slots.F: only CancelTx changes an opening.
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "slots" && strings.Contains(sel.Sel.Name, "Cancel") {
				seen["slots."+sel.Sel.Name]++
				require.Equal(t, "CancelTx", sel.Sel.Name, "%s", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	require.Equal(t, 1, seen["DeclareTx"], "the one declaration, in declareOpening")
	require.Equal(t, 1, seen["slots.CancelTx"], "the one withdrawal, in withdraw")
	require.Equal(t, 1, seen["ClaimTx"], "the one booking, a move-up's, in MoveUp")
}

// TestCrashMidDeclarationLosesBoth: a process that dies after the opening is inserted,
// before its transaction commits, leaves neither the opening nor the change that freed
// the time (nor its claim): the source's retry delivers it again, and it declares one
// opening, recorded on its claim, with the appointment as its source.
func TestCrashMidDeclarationLosesBoth(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	booked, err := f.book.Upsert(ctx, f.shop, appt("crash", 1, connectors.StatusBooked))
	require.NoError(t, err)
	id := booked.Appointment.ID

	release := pgtest.PausePoint(t, f.pool, "AFTER INSERT", "slot_openings")
	done := pgtest.Async(func() (book.Result, error) {
		return f.book.Upsert(ctx, f.shop, appt("crash", 2, connectors.StatusCancelled))
	})
	pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the cancellation", done)
	// The process dies: its connection goes, with the transaction it was in.
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory') k`))
	require.Error(t, (<-done).Err)
	release()

	require.Zero(t, f.count(t, `SELECT count(*) FROM slot_openings`), "no opening without its record")
	require.Zero(t, f.count(t, `SELECT count(*) FROM appointment_openings`), "no claim without its opening")
	a, err := f.book.Get(ctx, f.shop.ID, id)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusBooked, a.Status, "the change is lost with it, for its source to deliver again")
	require.Zero(t, a.Releases)

	res, err := f.book.Upsert(ctx, f.shop, appt("crash", 2, connectors.StatusCancelled))
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.Equal(t, res.Declaration.OpeningID, ops[0].ID)
	require.Equal(t, slots.SourceAppointment, ops[0].Source)
	require.Equal(t, id, ops[0].SourceID)
}

// TestFailedDeclarationRollsBackToTheClaim: a declaration that fails after its opening
// was inserted (here, its record) takes the opening back with it; the change that freed
// the time commits with its claim pending, and DeclarePending declares it once.
func TestFailedDeclarationRollsBackToTheClaim(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := f.book.Upsert(ctx, f.shop, appt("fails", 1, connectors.StatusBooked))
	require.NoError(t, err)
	for _, sql := range []string{
		`CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN RAISE EXCEPTION 'the record fails'; END $$`,
		`CREATE TRIGGER test_refuse BEFORE UPDATE ON appointment_openings FOR EACH ROW
		 WHEN (NEW.state = 'declared') EXECUTE FUNCTION test_refuse()`,
	} {
		_, err := f.pool.Exec(ctx, sql)
		require.NoError(t, err)
	}
	res, err := f.book.Upsert(ctx, f.shop, appt("fails", 2, connectors.StatusCancelled))
	require.NoError(t, err, "the change commits")
	require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)
	require.Equal(t, book.DeclarationPending, res.Declaration.State)
	require.Zero(t, f.count(t, `SELECT count(*) FROM slot_openings`), "the opening went with its record")
	require.Zero(t, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'offer_wave'`), "and its wave")

	_, err = f.pool.Exec(ctx, `DROP TRIGGER test_refuse ON appointment_openings`)
	require.NoError(t, err)
	for range 2 {
		_, err := f.book.DeclarePending(ctx, 10)
		require.NoError(t, err)
	}
	ds, err := f.book.Declarations(ctx, f.shop.ID, res.Appointment.ID)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, book.DeclarationDeclared, ds[0].State)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.Equal(t, ds[0].OpeningID, ops[0].ID)
	require.Equal(t, res.Appointment.ID, ops[0].SourceID)
}

// TestSecondReleaseWaitsForTheFirst: a release held in its declaration, its opening
// inserted, holds the appointment: the appointment booked again and cancelled again
// waits for it, then withdraws its opening and declares its own. Before, the two
// releases were declared side by side after their changes committed, both passed the
// checks, and the time was offered twice.
func TestSecondReleaseWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	booked, err := f.book.Upsert(ctx, f.shop, appt("twice", 1, connectors.StatusBooked))
	require.NoError(t, err)

	release := pgtest.PausePoint(t, f.pool, "AFTER INSERT", "slot_openings")
	first := pgtest.Async(func() (book.Result, error) {
		return f.book.Upsert(ctx, f.shop, appt("twice", 2, connectors.StatusCancelled))
	})
	pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the first release", first)
	second := pgtest.Async(func() (book.Result, error) {
		if _, err := f.book.Upsert(ctx, f.shop, appt("twice", 3, connectors.StatusBooked)); err != nil {
			return book.Result{}, err
		}
		return f.book.Upsert(ctx, f.shop, appt("twice", 4, connectors.StatusCancelled))
	})
	pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the appointment booked again", second)
	release()
	a1, a2 := <-first, <-second
	require.NoError(t, a1.Err)
	require.NoError(t, a2.Err)
	require.Equal(t, book.DeclarationDeclared, a1.V.Declaration.State)
	require.Equal(t, book.DeclarationDeclared, a2.V.Declaration.State)
	require.Equal(t, 2, a2.V.Declaration.Release)

	requireOneOpenOpening(t, f, booked.Appointment.ID)
	op, err := f.openings.Get(ctx, f.shop.ID, a1.V.Declaration.OpeningID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusCancelled, op.Status, "the first release's opening, withdrawn when booked again")
}

// TestRecancelWaitsForTheWithdrawal: the appointment booked again, held while it
// withdraws the opening its first release declared, holds the appointment: cancelled
// again meanwhile, it waits, then finds the time free and declares it anew. Before, the
// re-cancel checked the time between the withdrawal's read and its cancel, found it
// open, ended skipped already_open, and the time was then offered by no opening.
func TestRecancelWaitsForTheWithdrawal(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := f.book.Upsert(ctx, f.shop, appt("undo", 1, connectors.StatusBooked))
	require.NoError(t, err)
	cancelled, err := f.book.Upsert(ctx, f.shop, appt("undo", 2, connectors.StatusCancelled))
	require.NoError(t, err)
	old := cancelled.Declaration.OpeningID
	require.NotEqual(t, uuid.Nil, old)

	release := pgtest.PausePoint(t, f.pool, "BEFORE UPDATE", "slot_openings")
	withdrawing := pgtest.Async(func() (book.Result, error) {
		return f.book.Upsert(ctx, f.shop, appt("undo", 3, connectors.StatusBooked))
	})
	pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the withdrawal", withdrawing)
	recancel := pgtest.Async(func() (book.Result, error) {
		return f.book.Upsert(ctx, f.shop, appt("undo", 4, connectors.StatusCancelled))
	})
	pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the re-cancel", recancel)
	release()
	w, r := <-withdrawing, <-recancel
	require.NoError(t, w.Err)
	require.NoError(t, r.Err)
	require.Equal(t, old, w.V.Withdrawn)
	require.Equal(t, book.DeclarationDeclared, r.V.Declaration.State, r.V.Declaration.Reason)
	require.NotEqual(t, old, r.V.Declaration.OpeningID)
	requireOneOpenOpening(t, f, cancelled.Appointment.ID)
}

// TestReleaseStormAcrossAppointments: several appointments, each cancelled, booked
// again and cancelled again by many goroutines at once (each delivery several times, the
// owner's cancel among them), while DeclarePending runs beside them: each ends with
// exactly one open opening offering its time, from its own latest declaration.
func TestReleaseStormAcrossAppointments(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	const appointments, goroutines = 4, 12
	ids := make([]uuid.UUID, appointments)
	versions := make([][]connectors.Appointment, appointments)
	for i := range appointments {
		ext := "storm-" + string(rune('a'+i))
		for v, st := range []connectors.Status{connectors.StatusBooked, connectors.StatusCancelled,
			connectors.StatusBooked, connectors.StatusCancelled} {
			in := appt(ext, int64(v+1), st)
			in.StartsAt = in.StartsAt.Add(time.Duration(i) * 2 * time.Hour)
			versions[i] = append(versions[i], in)
		}
		res, err := f.book.Upsert(ctx, f.shop, versions[i][0])
		require.NoError(t, err)
		ids[i] = res.Appointment.ID
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*appointments*8)
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 11))
			<-start
			for _, i := range r.Perm(appointments) {
				for _, v := range r.Perm(len(versions[i]) - 1) {
					if _, err := f.book.Upsert(ctx, f.shop, versions[i][v+1]); err != nil {
						errs <- err
					}
				}
				if g%4 == 0 {
					if _, err := f.book.Cancel(ctx, f.shop, ids[i]); err != nil && err != book.ErrNotBooked {
						errs <- err
					}
				}
				if g%3 == 0 {
					if _, err := f.book.DeclarePending(ctx, 10); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, id := range ids {
		a, err := f.book.Get(ctx, f.shop.ID, id)
		require.NoError(t, err)
		require.Equal(t, connectors.StatusCancelled, a.Status, versions[i][0].ExternalID)
		requireOneOpenOpening(t, f, id)
	}
}

// requireOneOpenOpening checks the openings of appointment id: every one was declared by
// one of its releases (its source says so, its claim records it), and exactly one is
// open, the latest declared; the others were withdrawn.
func requireOneOpenOpening(t *testing.T, f fixture, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	ds, err := f.book.Declarations(ctx, f.shop.ID, id)
	require.NoError(t, err)
	declared := map[uuid.UUID]bool{}
	var latest uuid.UUID
	for _, d := range ds {
		require.Contains(t, []book.DeclarationState{book.DeclarationDeclared, book.DeclarationSkipped}, d.State)
		if d.State == book.DeclarationDeclared {
			require.False(t, declared[d.OpeningID], "a release declares its own opening")
			declared[d.OpeningID], latest = true, d.OpeningID
		}
	}
	var open []uuid.UUID
	for _, op := range f.openingsOf(t) {
		if op.SourceID != id {
			continue
		}
		require.Equal(t, slots.SourceAppointment, op.Source)
		require.True(t, declared[op.ID], "opening %s is recorded on its claim", op.ID)
		if op.Status == slots.StatusOpen {
			open = append(open, op.ID)
		} else {
			require.Equal(t, slots.StatusCancelled, op.Status, "withdrawn")
		}
	}
	require.Equal(t, []uuid.UUID{latest}, open, "exactly one open opening offers the time: the latest declared")
	require.Equal(t, len(declared), f.count(t, `SELECT count(*) FROM slot_openings WHERE source_id = $1`, id))
}
