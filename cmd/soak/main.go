//go:build soak

// Command soak runs the server the way a bad day runs it: several real
// instances on a Postgres and a Redis of its own, the Twilio fake and a Stripe stand-in,
// and storms of concurrent YES replies over real HTTP while it SIGKILLs and restarts
// instances at random moments and restarts Redis and Postgres. Then it lets everything
// heal and checks what must never happen: a double booking, a text left without an
// answer, an offer texted twice, a booking left pending with nothing to heal it.
//
//	go run -tags soak ./cmd/soak                  # defaults: 3 instances, 100 storms
//	go run -tags soak ./cmd/soak -seed 7 -storms 150
//
// It needs the Postgres binaries (/usr/lib/postgresql/*/bin) and redis-server; it runs
// its own cluster (initdb into a temporary directory, its own port and socket) and its
// own redis-server, never the machine's, and removes them at the end, also on Ctrl-C.
// It exits 1 when a check fails. See docs/soak.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

type options struct {
	instances, storms, size, bigSize, bigEvery, preparers int
	seed                                                  uint64
	killChance                                            float64
	redisRestarts, pgRestarts                             int
	offerWait, heal, timeout                              time.Duration
	keep                                                  bool
	rev                                                   string
}

func main() {
	var o options
	flag.IntVar(&o.instances, "instances", 3, "server instances")
	flag.IntVar(&o.storms, "storms", 100, "YES storms (one opening each)")
	flag.IntVar(&o.size, "size", 100, "customers replying YES at once in a storm")
	flag.IntVar(&o.bigSize, "big-size", 320, "customers in a big storm")
	flag.IntVar(&o.bigEvery, "big-every", 20, "every n-th storm is a big one (0: none)")
	flag.IntVar(&o.preparers, "preparers", 2, "storms set up at the same time, ahead of the one firing")
	flag.Uint64Var(&o.seed, "seed", 0, "random seed (0: from the clock; printed, to run the same chaos again)")
	flag.Float64Var(&o.killChance, "kill-chance", 0.2, "chance that a storm SIGKILLs an instance while it fires")
	flag.IntVar(&o.redisRestarts, "redis-restarts", 2, "Redis restarts (SIGKILL, then start), at random storms")
	flag.IntVar(&o.pgRestarts, "postgres-restarts", 1, "Postgres restarts (stop -m immediate, then start), at random storms")
	flag.DurationVar(&o.offerWait, "offer-wait", 30*time.Second, "how long a storm waits for its offers to be texted before it fires anyway")
	flag.DurationVar(&o.heal, "heal", 4*time.Minute, "how long everything may take to heal before the checks")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on the whole run")
	flag.StringVar(&o.rev, "rev", "", "build the server as committed at this git revision (e.g. HEAD) instead of from the working tree")
	flag.BoolVar(&o.keep, "keep-logs", false, "keep the instances' logs even when every check passes")
	flag.Parse()
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano() % 1_000_000)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	failed, err := run(ctx, o, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "soak: "+format+"\n", args...)
}

// cleanups runs the functions it is given in reverse, as t.Cleanup does: it stands in
// for the testing.TB that twiliofake takes (Helper, Cleanup, and Errorf and Fatalf for
// what breaks Twilio's contract, which the checks take first).
type cleanups struct {
	testing.TB
	fns    []func()
	errors []string
}

func (c *cleanups) Helper()          {}
func (c *cleanups) Cleanup(f func()) { c.fns = append(c.fns, f) }
func (c *cleanups) Errorf(format string, args ...any) {
	c.errors = append(c.errors, fmt.Sprintf(format, args...))
}
func (c *cleanups) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// run runs the cleanups and reports whether one found something wrong (printed).
func (c *cleanups) run() (failed bool) {
	for _, f := range slices.Backward(c.fns) {
		f()
	}
	for _, e := range c.errors {
		say("FAIL: %s", e)
	}
	return len(c.errors) > 0
}

func run(ctx context.Context, o options, out io.Writer) (failed bool, err error) {
	started := time.Now()
	work, err := os.MkdirTemp("", "slotrec-soak-")
	if err != nil {
		return false, err
	}
	logDir := filepath.Join(work, "logs")
	if err := os.Mkdir(logDir, 0o755); err != nil {
		return false, err
	}
	defer func() {
		if failed || err != nil || o.keep {
			say("logs kept in %s", logDir)
			_ = os.RemoveAll(filepath.Join(work, "redis"))
			_ = os.Remove(filepath.Join(work, "server"))
			return
		}
		_ = os.RemoveAll(work)
	}()
	bin := filepath.Join(work, "server")
	if o.rev != "" {
		if out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", o.rev).Output(); err == nil {
			o.rev = strings.TrimSpace(string(out))
		}
		say("seed %d; building the server at %s", o.seed, o.rev)
		err = loadkit.BuildRev(ctx, bin, o.rev)
	} else {
		say("seed %d; building the server from the working tree", o.seed)
		err = loadkit.Build(ctx, bin)
	}
	if err != nil {
		return false, err
	}

	say("starting a Postgres cluster and a redis-server of the soak's own")
	pg, err := startPostgres(ctx)
	if err != nil {
		return false, err
	}
	defer pg.close()
	rs, err := startRedis(ctx, filepath.Join(work, "redis"))
	if err != nil {
		return false, err
	}
	defer rs.close()
	db, err := loadkit.NewDatabase(ctx, pg.url(), "slotrec_soak", say)
	if err != nil {
		return false, err
	}
	defer db.Pool.Close()

	tb := &cleanups{}
	defer func() {
		if tb.run() {
			failed = true // the Twilio fake saw a violation after the checks
		}
	}()
	tw := twiliofake.New(tb)
	st, err := loadkit.StartStripe()
	if err != nil {
		return false, err
	}
	defer st.Close()

	env := loadkit.Env{
		DatabaseURL: db.URL, RedisURL: rs.url(), KeyPrefix: "soak:",
		TwilioURL: tw.URL(), TwilioSID: twiliofake.TestAccountSID, TwilioToken: twiliofake.TestAuthToken,
		StripeURL: st.URL, Overrides: loadkit.InboundOverrides,
	}
	if err := loadkit.Migrate(ctx, bin, env); err != nil {
		return false, err
	}
	f, err := newFleet(bin, env, o.instances, logDir)
	if err != nil {
		return false, err
	}
	defer f.stop()
	for i := range o.instances {
		if err := f.start(ctx, i); err != nil {
			return false, err
		}
	}
	say("%d instances ready; %d storms (every %d-th of %d YES, the others of %d)", o.instances, o.storms, o.bigEvery, o.bigSize, o.size)

	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x5eed))
	overrides, err := loadkit.ParseOverrides(loadkit.InboundOverrides)
	if err != nil {
		return false, err
	}
	s := &soak{o: o, fleet: f, pool: db.Pool, rng: rng,
		drive: &loadkit.Driver{Client: loadkit.NewClient(), AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken,
			Overrides: &overrides, CheckReport: tw.CheckCallback}}
	s.chaos = newChaos(f, pg, rs, o, rand.New(rand.NewPCG(o.seed+1, o.seed)))
	stormsTook := time.Now()
	runErr := s.run(ctx)
	stormsDur := time.Since(stormsTook)
	s.chaos.wait()
	if runErr != nil {
		return false, runErr
	}
	// Anything a failed restart left down comes back before healing starts.
	for i := range o.instances {
		if !slices.Contains(f.up(), i) {
			if err := f.start(ctx, i); err != nil {
				return false, err
			}
		}
	}
	say("storms done in %s; waiting for everything to heal (at most %s)", stormsDur.Round(time.Second), o.heal)
	healTook, healLast, healed := s.heal(ctx)
	r, err := s.check(ctx, tw)
	if err != nil {
		return false, fmt.Errorf("checks: %w", err)
	}
	s.explain(ctx, tw, r)
	var chaosErrs []string
	for len(s.chaos.errs) > 0 {
		chaosErrs = append(chaosErrs, (<-s.chaos.errs).Error())
	}
	s.print(out, r, summaryFacts{took: time.Since(started), storms: stormsDur, healTook: healTook, healed: healed, healLast: healLast, chaosErrs: chaosErrs})
	return r.failures() > 0, nil
}

type summaryFacts struct {
	took, storms, healTook time.Duration
	healed                 bool
	healLast               healState
	chaosErrs              []string
}

func (s *soak) print(w io.Writer, r report, f summaryFacts) {
	s.mu.Lock()
	sizes := map[int]int{}
	for _, st := range s.storms {
		sizes[st.size]++
	}
	nYes, partial := len(s.yeses), s.partial
	s.mu.Unlock()
	var sizeText []string
	for _, size := range slices.Sorted(func(yield func(int) bool) {
		for k := range sizes {
			if !yield(k) {
				return
			}
		}
	}) {
		sizeText = append(sizeText, fmt.Sprintf("%d × %d YES", sizes[size], size))
	}
	outcomes := s.outcomes()
	var outText []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range outcomes {
			if !yield(k) {
				return
			}
		}
	}) {
		outText = append(outText, fmt.Sprintf("%s %d", k, outcomes[k]))
	}
	c := s.chaos
	built := "the working tree"
	if s.o.rev != "" {
		built = s.o.rev
	}
	fmt.Fprintf(w, "soak summary (seed %d, %d instances, server from %s, %s in all)\n", s.o.seed, s.o.instances, built, f.took.Round(time.Second))
	fmt.Fprintf(w, "  storms           %d (%s) in %s; %d fired before all their offers were texted\n",
		len(s.storms), strings.Join(sizeText, ", "), f.storms.Round(time.Second), partial)
	fmt.Fprintf(w, "  YES sent         %d\n", nYes)
	fmt.Fprintf(w, "  answers          %s\n", strings.Join(outText, ", "))
	fmt.Fprintf(w, "  chaos            %d instance kills (SIGKILL), %d instance restarts, %d Redis restarts, %d Postgres restarts\n",
		c.kills.Load(), c.restarts.Load(), c.redisRestarts.Load(), c.pgRestarts.Load())
	for _, e := range f.chaosErrs {
		fmt.Fprintf(w, "  chaos error      %s\n", e)
	}
	if f.healed {
		fmt.Fprintf(w, "  healed           in %s\n", f.healTook.Round(time.Second))
	} else {
		fmt.Fprintf(w, "  NOT healed       within %s: %s\n", f.healTook.Round(time.Second), f.healLast)
	}
	fmt.Fprintf(w, "  openings         %d filled, %d still open\n", r.openingsBooked, r.openingsOpen)
	fmt.Fprintf(w, "  texts            %d offers, %d others (links, notices, answers by text)\n", r.offerTexts, r.otherTexts)
	fmt.Fprintf(w, "  lost answers     %d YES got no HTTP answer: %d never stored, %d finished by the sweeper, %d stored and retold by the sweeper; unheard by outcome %v\n",
		r.noAnswer, r.noAnswerNotStored, r.noAnswerSwept, r.noAnswerRetold, r.unheardByOutcome)
	fmt.Fprintf(w, "  heard twice      %d YES answered over HTTP and texted the same answer again (Twilio's report that it took the answer never recorded)\n",
		r.heardTwice)
	retried := 0
	s.mu.Lock()
	for _, y := range s.yeses {
		if y.ans.Attempts > 1 {
			retried++
		}
	}
	s.mu.Unlock()
	fmt.Fprintf(w, "  Twilio's side    %d YES sent more than once (a balancer's failover, or Twilio's retries: %s); answers reported taken %d, reports lost after every retry %d\n",
		retried, loadkit.InboundOverrides, s.drive.Reported.Load(), s.drive.ReportsLost.Load())
	fmt.Fprintf(w, "  try again, then  %v (told retry_later over HTTP, the answer not stored, finished later by the sweeper and texted)\n", r.retryThenText)
	fmt.Fprintf(w, "  killed mid-work  River jobs left running on killed processes (rescued 7 min after they started) %v; offers claimed but never texted %d; offers texted but not recorded %d\n",
		r.orphans, r.offersSending, r.textedUnrecorded)
	fmt.Fprintf(w, "  pending          %d bookings pending payment: %d past their hold (reconciliation alive: %v), %d still without a link (booking sweep alive: %v)\n",
		r.pending, r.pendingPastHold, r.reconcileAlive, r.noLink, r.sweepAlive)
	fmt.Fprintln(w, "  checks (each must be 0)")
	line := func(name string, n int, detail string) {
		mark := "ok"
		if n != 0 {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "    %-44s %4d  %-4s %s\n", name, n, mark, detail)
	}
	line("double bookings", r.doubleBooked+r.toldBookedTwice+r.toldBookedNoBooking,
		fmt.Sprintf("(2 live bookings for an opening %d; 2 customers told booked for one %d; told booked, holding none %d)",
			r.doubleBooked, r.toldBookedTwice, r.toldBookedNoBooking))
	line("texts without a final outcome heard", r.unanswered+r.storedUnheard,
		fmt.Sprintf("(no outcome stored %d; stored, not heard over HTTP and not texted %d, of which booked %d; answers still to be texted %d)",
			r.unanswered, r.storedUnheard, r.bookedUnheard, r.retoldPending))
	line("texts sent twice", r.sentTwice+r.repeatedOther,
		fmt.Sprintf("(offers beyond one per opening, generation and customer %d of %d; other texts repeated word for word to one customer %d)",
			r.sentTwice, r.offerTexts, r.repeatedOther))
	line("pending bookings with no job to heal them", r.pastHoldStuck+r.noLinkNoJob,
		fmt.Sprintf("(past the hold, no reconciliation %d; no link and no booking sweep %d)", r.pastHoldStuck, r.noLinkNoJob))
	line("YES without an answer, or heard twice", r.noAnswerNotStored+r.heardTwice,
		fmt.Sprintf("(never stored: no HTTP answer after Twilio's retries %d; answered over HTTP and texted again %d)",
			r.noAnswerNotStored, r.heardTwice))
	line("breaches of Twilio's API contract", len(r.twilioViolations),
		"(checked by the Twilio fake against Twilio's OpenAPI documents)")
	if len(r.twilioViolations) > 0 {
		fmt.Fprintln(w, twiliofake.Summary(r.twilioViolations, 10))
	}
	if r.failures() == 0 {
		fmt.Fprintln(w, "  result           OK")
	} else {
		fmt.Fprintf(w, "  result           FAILED (seed %d)\n", s.o.seed)
	}
}
