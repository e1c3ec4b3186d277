package senders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// Registrar is the provider's side of the US A2P 10DLC registration: the business (who
// it is, in the provider's own steps), its brand and its campaign. *twilio.Sender
// implements it. Each call is one request to the provider, which the flow paces.
type Registrar interface {
	// NextBusinessStep is the next call registering b that done does not hold; false
	// once the business is registered and the brand may be made.
	NextBusinessStep(b sms.Business, done sms.Done) (sms.Step, bool)
	// FindBrand looks for the business's brand in one page of the account's brands
	// (page "" first); next is the page after it, "" after the last.
	FindBrand(ctx context.Context, done sms.Done, page string) (b sms.Brand, found bool, next string, err error)
	CreateBrand(ctx context.Context, b sms.Business, done sms.Done) (sms.Brand, error)
	Brand(ctx context.Context, sid string) (sms.Brand, error)
	FindCampaign(ctx context.Context, service string) (sms.CampaignState, bool, error)
	CreateCampaign(ctx context.Context, service string, c sms.Campaign) (sms.CampaignState, error)
	Campaign(ctx context.Context, service, sid string) (sms.CampaignState, error)
	DeleteCampaign(ctx context.Context, service, sid string) error
}

// BusinessTypes are the business_type values a registration takes.
var BusinessTypes = sms.BusinessTypes

// Details are the business's details an owner submits. Stored with the registration (the
// provider needs them again on a resubmission); json tags are their stored names.
type Details struct {
	BusinessName string  `json:"business_name"`
	BusinessType string  `json:"business_type"`
	EIN          string  `json:"ein,omitempty"`
	Website      string  `json:"website,omitempty"`
	Address      Address `json:"address"`
	Contact      Contact `json:"contact"`
}

// Address is the business's street address.
type Address struct {
	Street     string `json:"street"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// Contact is the business's authorised representative. Phone is the owner's mobile: a
// sole proprietor's brand sends its one-time code there.
type Contact struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

func (d Details) soleProprietor() bool { return d.business().SoleProprietor() }

// business is d as the provider's registration takes it.
func (d Details) business() sms.Business {
	return sms.Business{Name: d.BusinessName, Type: d.BusinessType, EIN: d.EIN, Website: d.Website,
		Address: sms.Address{Street: d.Address.Street, City: d.Address.City, Region: d.Address.Region,
			PostalCode: d.Address.PostalCode, Country: d.Address.Country},
		FirstName: d.Contact.FirstName, LastName: d.Contact.LastName, Email: d.Contact.Email, Phone: d.Contact.Phone}
}

var (
	einPattern     = regexp.MustCompile(`^[0-9]{2}-?[0-9]{7}$`)
	countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)
)

// Validate names the first missing or malformed field (problem.Invalid, 422).
func (d Details) Validate() error {
	need := func(field, v string, max int) error {
		if strings.TrimSpace(v) == "" {
			return problem.Invalidf(field, "%s is required", field)
		}
		if len(v) > max {
			return problem.Invalidf(field, "%s is longer than %d characters", field, max)
		}
		return nil
	}
	if err := need("business_name", d.BusinessName, 255); err != nil {
		return err
	}
	if !slices.Contains(BusinessTypes, d.BusinessType) {
		return problem.Invalidf("business_type", "business_type must be one of %s", strings.Join(BusinessTypes, ", "))
	}
	if !d.soleProprietor() && !einPattern.MatchString(d.EIN) {
		return problem.Invalidf("ein", "ein (the US employer identification number, 12-3456789) is required for a company")
	}
	if d.Website != "" || !d.soleProprietor() {
		if u, err := url.Parse(d.Website); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return problem.Invalidf("website", "website must be the business's http(s) address, such as https://example.com")
		}
	}
	for _, f := range []struct{ field, v string }{{"address.street", d.Address.Street}, {"address.city", d.Address.City},
		{"address.region", d.Address.Region}, {"address.postal_code", d.Address.PostalCode}} {
		if err := need(f.field, f.v, 200); err != nil {
			return err
		}
	}
	if !countryPattern.MatchString(d.Address.Country) {
		return problem.Invalidf("address.country", "address.country must be an ISO 3166 code such as US")
	}
	if err := need("contact.first_name", d.Contact.FirstName, 100); err != nil {
		return err
	}
	if err := need("contact.last_name", d.Contact.LastName, 100); err != nil {
		return err
	}
	if a, err := mail.ParseAddress(d.Contact.Email); err != nil || a.Address != d.Contact.Email {
		return problem.Invalidf("contact.email", "contact.email must be an email address")
	}
	if !phone.Valid(d.Contact.Phone) {
		return problem.Invalidf("contact.phone", "contact.phone must be in E.164 form, such as +15555550100")
	}
	return nil
}

// Register submits the shop's registration: the first, or a new one after a failure
// (with the details fixed). It needs the shop's own sender. The job that walks it is
// enqueued in the same transaction.
func (s *Service) Register(ctx context.Context, shop shops.Shop, d Details) (Sender, error) {
	if err := d.Validate(); err != nil {
		return Sender{}, err
	}
	if s.reg == nil {
		return Sender{}, ErrNoProvider
	}
	details, err := json.Marshal(d)
	if err != nil {
		return Sender{}, fmt.Errorf("encode registration details: %w", err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return Sender{}, fmt.Errorf("register shop %s: %w", shop.ID, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := queries.SenderLock(ctx, tx, shop.ID.String()); err != nil {
		return Sender{}, fmt.Errorf("lock sender of %s: %w", shop.ID, err)
	}
	sender, err := queries.SenderGet(ctx, tx, shop.ID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && sender.Status != "active") {
		return Sender{}, ErrNoSender
	}
	if err != nil {
		return Sender{}, fmt.Errorf("get sender of %s: %w", shop.ID, err)
	}
	now := s.cfg.Now()
	if err := s.checkSubmissions(ctx, tx, shop.ID, now); err != nil {
		return Sender{}, err
	}
	kept := []byte("{}")
	if old, err := queries.RegistrationGet(ctx, tx, shop.ID); err == nil && old.Status == StatusFailed {
		kept = keptSteps(old)
	} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Sender{}, fmt.Errorf("get registration of %s: %w", shop.ID, err)
	}
	reg, err := queries.RegistrationSubmit(ctx, tx, db.RegistrationSubmitParams{ShopID: shop.ID, Details: details,
		Now: now, KeptSteps: kept})
	if errors.Is(err, pgx.ErrNoRows) {
		return Sender{}, ErrRegistrationUnderway
	}
	if err != nil {
		return Sender{}, fmt.Errorf("submit registration of %s: %w", shop.ID, err)
	}
	if err := s.transition(ctx, tx, reg, now); err != nil {
		return Sender{}, err
	}
	if _, err := s.jobs.InsertTx(ctx, tx, jobs.SMSRegistration{ShopID: shop.ID, Submission: int(reg.Submission)}, nil); err != nil {
		return Sender{}, fmt.Errorf("enqueue registration of %s: %w", shop.ID, err)
	}
	out, err := read(ctx, tx, shop.ID, shop.SMSNumber)
	if err != nil {
		return Sender{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Sender{}, fmt.Errorf("register shop %s: %w", shop.ID, err)
	}
	return out, nil
}

// CodeSubmissionLimit is the problem code of a registration refused because the shop
// submitted SubmissionsPerDay of them in the last 24 hours.
const CodeSubmissionLimit = "registration_limit"

// checkSubmissions refuses a submission beyond SubmissionsPerDay in 24 hours, saying
// when the next may be made. The sender's lock, held by the caller, orders a shop's
// submissions, so two at once cannot both pass.
func (s *Service) checkSubmissions(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, now time.Time) error {
	rows, err := queries.RegistrationTransitionList(ctx, tx, shopID)
	if err != nil {
		return fmt.Errorf("list registration transitions of %s: %w", shopID, err)
	}
	var recent []time.Time
	for _, r := range rows {
		if r.Status == StatusSubmitted && r.At.After(now.Add(-24*time.Hour)) {
			recent = append(recent, r.At)
		}
	}
	if len(recent) < s.cfg.SubmissionsPerDay {
		return nil
	}
	slices.SortFunc(recent, time.Time.Compare)
	next := recent[len(recent)-s.cfg.SubmissionsPerDay].Add(24 * time.Hour)
	return problem.New(problem.Conflict, CodeSubmissionLimit, fmt.Sprintf(
		"the shop submitted %d registrations in the last 24 hours, the most it may: the next may be submitted after %s",
		len(recent), next.UTC().Format(time.RFC3339)))
}

// keptSteps is what a new submission keeps of a failed one: after a failed campaign
// (there is one only once the brand was approved), the brand and everything under it
// (the old campaign is deleted first); after anything else, nothing (the business
// registered anew with the fixed details).
func keptSteps(old db.SmsRegistration) []byte {
	if !old.CampaignStatus.Valid {
		return []byte("{}")
	}
	var steps map[string]string
	if err := json.Unmarshal(old.Steps, &steps); err != nil {
		return []byte("{}")
	}
	if c, ok := steps[stepCampaign]; ok {
		steps[stepOldCampaign+":"+c] = c
		delete(steps, stepCampaign)
	}
	b, _ := json.Marshal(steps)
	return b
}

// transition records reg's statuses as they now are and announces them.
func (s *Service) transition(ctx context.Context, q db.DBTX, reg db.SmsRegistration, at time.Time) error {
	if err := queries.RegistrationTransitionInsert(ctx, q, db.RegistrationTransitionInsertParams{ShopID: reg.ShopID,
		Submission: reg.Submission, At: at, Status: reg.Status, BrandStatus: reg.BrandStatus,
		CampaignStatus: reg.CampaignStatus, FailureReason: reg.FailureReason}); err != nil {
		return fmt.Errorf("record registration transition of %s: %w", reg.ShopID, err)
	}
	sender, err := queries.SenderGet(ctx, q, reg.ShopID)
	if err != nil {
		return fmt.Errorf("get sender of %s: %w", reg.ShopID, err)
	}
	now := Sender{ShopID: reg.ShopID, Number: sender.Number.String, MessagingServiceSID: sender.MessagingServiceSid.String,
		Registration: registrationOf(reg)}
	return hooks.Record(ctx, q, reg.ShopID, hooks.SMSSenderUpdated, at, now.Event())
}

// Transitions lists every change of the shop's registration, oldest first.
func (s *Service) Transitions(ctx context.Context, shopID uuid.UUID) ([]Registration, error) {
	rows, err := queries.RegistrationTransitionList(ctx, s.pool, shopID)
	if err != nil {
		return nil, fmt.Errorf("list registration transitions of %s: %w", shopID, err)
	}
	out := make([]Registration, len(rows))
	for i, r := range rows {
		out[i] = Registration{Status: r.Status, BrandStatus: r.BrandStatus.String, CampaignStatus: r.CampaignStatus.String,
			FailureReason: r.FailureReason.String, UpdatedAt: r.At.UTC()}
	}
	return out, nil
}

// Step names of the brand and the campaign (the business's are the provider's): the
// keys of a registration's steps, each holding the SID its step made. They are stored:
// never rename them.
const (
	stepBrand             = "brand"
	stepCampaign          = "campaign"
	stepOldCampaign       = "old_campaign"
	deletedCampaignPrefix = "deleted:"
)

// errStale means another submission replaced the one being walked.
var errStale = errors.New("senders: registration replaced by a newer submission")

// errTurnOver means the flow used its turn: another shop's registration goes next.
var errTurnOver = errors.New("senders: turn over")

// flow is one run of the job over one submission.
type flow struct {
	s       *Service
	reg     db.SmsRegistration
	d       Details
	steps   map[string]string
	service string
	shop    shops.Shop
	// turnEnds is when the run makes way for other shops' registrations (errTurnOver)
	// before its next step, having taken one at least; zero for never. stepped says it
	// took one. A status read is no step (it makes nothing to record): a run reads at
	// most the brand's and the campaign's once.
	turnEnds time.Time
	stepped  bool
}

// take starts a step of the run's turn, or says the turn is over.
func (f *flow) take() error {
	if f.stepped && !f.turnEnds.IsZero() && !time.Now().Before(f.turnEnds) {
		return errTurnOver
	}
	f.stepped = true
	return nil
}

// step runs make unless name has a record, records what it made (before anything else
// happens), and returns it. make paces each of its provider calls (f.pace).
func (f *flow) step(ctx context.Context, name string, make func() (string, error)) (string, error) {
	if sid, ok := f.steps[name]; ok {
		return sid, nil
	}
	if err := f.take(); err != nil {
		return "", err
	}
	sid, err := make()
	if err != nil {
		return "", err
	}
	reg, err := queries.RegistrationSetStep(ctx, f.s.pool, db.RegistrationSetStepParams{ShopID: f.reg.ShopID,
		Submission: f.reg.Submission, Step: name, Sid: sid, Now: f.s.cfg.Now()})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errStale
	}
	if err != nil {
		return "", fmt.Errorf("record registration step %s of %s: %w", name, f.reg.ShopID, err)
	}
	f.reg = reg
	f.steps[name] = sid
	return sid, nil
}

// pace waits until one more provider call may go, across every instance: every call of
// the flow, a list's pages included, comes after it.
func (f *flow) pace(ctx context.Context) error {
	return f.s.pacer.Wait(ctx, "sms_registration", f.s.cfg.PerSecond)
}

// set records a change of the statuses (if there is one) and announces it.
func (f *flow) set(ctx context.Context, status, brand, campaign, reason string) error {
	tx, err := f.s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("set registration status of %s: %w", f.reg.ShopID, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	now := f.s.cfg.Now()
	reg, err := queries.RegistrationSetStatus(ctx, tx, db.RegistrationSetStatusParams{ShopID: f.reg.ShopID,
		Submission: f.reg.Submission, Status: status, BrandStatus: pgvalue.TextOrNull(brand), CampaignStatus: pgvalue.TextOrNull(campaign),
		FailureReason: pgvalue.TextOrNull(reason), Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := queries.RegistrationGet(ctx, tx, f.reg.ShopID)
		if err == nil && cur.Submission != f.reg.Submission {
			return errStale
		}
		return nil // nothing changed
	}
	if err != nil {
		return fmt.Errorf("set registration status of %s: %w", f.reg.ShopID, err)
	}
	if err := f.s.transition(ctx, tx, reg, now); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("set registration status of %s: %w", f.reg.ShopID, err)
	}
	f.reg = reg
	f.s.cfg.Logger.Info("registration status", "shop_id", reg.ShopID, "status", status, "brand_status", brand,
		"campaign_status", campaign)
	return nil
}

// Advance walks the shop's registration (its submission-th submission) as far as it can
// go now. It returns how long to wait before the next poll: 0 when the submission is
// decided, or replaced by a newer one (whose own job walks it). The wait doubles with
// each poll that finds nothing changed (backoff).
func (s *Service) Advance(ctx context.Context, shopID uuid.UUID, submission int) (time.Duration, error) {
	if s.reg == nil {
		return 0, ErrNoProvider
	}
	wait, err := s.advance(ctx, shopID, submission, time.Time{})
	if errors.Is(err, errStale) {
		return 0, nil
	}
	return wait, err
}

// advanceTurn is Advance for one turn (Config.Turn, one step at least): the job's run,
// which then makes way for the other shops' registrations waiting in the queue (turn
// reports that more remains). Shops take turns so: one shop's long flow, or its
// resubmissions, delays another's by a call or two, not by the whole flow.
func (s *Service) advanceTurn(ctx context.Context, shopID uuid.UUID, submission int) (wait time.Duration, turn bool, err error) {
	if s.reg == nil {
		return 0, false, ErrNoProvider
	}
	wait, err = s.advance(ctx, shopID, submission, time.Now().Add(s.cfg.Turn))
	switch {
	case errors.Is(err, errStale):
		return 0, false, nil
	case errors.Is(err, errTurnOver):
		return 0, true, nil
	}
	return wait, false, err
}

func (s *Service) advance(ctx context.Context, shopID uuid.UUID, submission int, turnEnds time.Time) (time.Duration, error) {
	reg, err := queries.RegistrationGet(ctx, s.pool, shopID)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get registration of %s: %w", shopID, err)
	}
	if int(reg.Submission) != submission || reg.Status == StatusVerified || reg.Status == StatusFailed {
		return 0, nil
	}
	sender, err := queries.SenderGet(ctx, s.pool, shopID)
	if err != nil {
		return 0, fmt.Errorf("get sender of %s: %w", shopID, err)
	}
	shop, err := shops.Read(ctx, s.pool, shopID)
	if err != nil {
		return 0, err
	}
	f := &flow{s: s, reg: reg, service: sender.MessagingServiceSid.String, shop: shop, steps: map[string]string{}, turnEnds: turnEnds}
	if err := json.Unmarshal(reg.Details, &f.d); err != nil {
		return 0, fmt.Errorf("decode registration details of %s: %w", shopID, err)
	}
	if err := json.Unmarshal(reg.Steps, &f.steps); err != nil {
		return 0, fmt.Errorf("decode registration steps of %s: %w", shopID, err)
	}
	failed, err := f.business(ctx)
	if err != nil || failed {
		return 0, err
	}
	brand, err := f.brand(ctx)
	if err != nil {
		return 0, err
	}
	switch brand.Review {
	case sms.Approved:
	case sms.Rejected:
		return 0, f.set(ctx, StatusFailed, brand.Status, "", reasonOr(brand.FailureReason, "the brand registration failed"))
	default:
		err := f.set(ctx, StatusBrandPending, brand.Status, "", "")
		return s.backoff(f.reg.UpdatedAt), err
	}
	camp, err := f.campaign(ctx, brand.SID)
	if err != nil {
		return 0, err
	}
	switch camp.Review {
	case sms.Approved:
		return 0, f.set(ctx, StatusVerified, brand.Status, camp.Status, "")
	case sms.Rejected:
		return 0, f.set(ctx, StatusFailed, brand.Status, camp.Status, reasonOr(camp.FailureReason, "the campaign registration failed"))
	default:
		err := f.set(ctx, StatusCampaignPending, brand.Status, camp.Status, "")
		return s.backoff(f.reg.UpdatedAt), err
	}
}

func reasonOr(reason, fallback string) string {
	if reason != "" {
		return reason
	}
	return fallback
}

// backoff is the wait before the next poll of a registration whose statuses last
// changed at since: as long as they have stood, from PollMin up to PollMax, so the
// polls' interval doubles while nothing changes. (The job's attempt cannot count them:
// River does not count a snooze as an attempt, and polls every PollMin for weeks of
// carrier vetting would spend the rate every shop shares.)
func (s *Service) backoff(since time.Time) time.Duration {
	return min(max(s.cfg.Now().Sub(since), s.cfg.PollMin), s.cfg.PollMax)
}

// business registers the business with the provider, one recorded step after another,
// up to its review. failed reports details the provider finds incomplete (recorded as
// the failure).
func (f *flow) business(ctx context.Context) (failed bool, err error) {
	b := f.d.business()
	for {
		next, ok := f.s.reg.NextBusinessStep(b, f.steps)
		if !ok {
			return false, nil
		}
		_, err := f.step(ctx, next.Name, func() (string, error) {
			if err := f.pace(ctx); err != nil {
				return "", err
			}
			return next.Run(ctx)
		})
		if incomplete := (*sms.IncompleteError)(nil); errors.As(err, &incomplete) {
			return true, f.set(ctx, StatusFailed, "", "", incomplete.Reason)
		}
		if err != nil {
			return false, err
		}
	}
}

// brand finds or registers the brand, then reads its status.
func (f *flow) brand(ctx context.Context) (sms.Brand, error) {
	r := f.s.reg
	var created *sms.Brand
	sid, err := f.step(ctx, stepBrand, func() (string, error) {
		// An instance that registered the brand and died before recording it: find it
		// rather than register a second (TCR charges for each).
		// The list is read page by page, each page a paced call.
		var b sms.Brand
		found, page := false, ""
		for {
			if err := f.pace(ctx); err != nil {
				return "", err
			}
			var err error
			if b, found, page, err = r.FindBrand(ctx, f.steps, page); err != nil {
				return "", err
			}
			if found || page == "" {
				break
			}
		}
		if !found {
			if err := f.pace(ctx); err != nil {
				return "", err
			}
			var err error
			if b, err = r.CreateBrand(ctx, f.d.business(), f.steps); err != nil {
				return "", err
			}
		}
		created = &b
		return b.SID, nil
	})
	if err != nil {
		return sms.Brand{}, err
	}
	if created != nil {
		return *created, nil
	}
	if err := f.pace(ctx); err != nil {
		return sms.Brand{}, err
	}
	return r.Brand(ctx, sid)
}

// campaign deletes a failed campaign a resubmission replaces, finds or registers the
// campaign, then reads its status.
func (f *flow) campaign(ctx context.Context, brandSID string) (sms.CampaignState, error) {
	r := f.s.reg
	for _, k := range sortedKeys(f.steps) {
		if old, ok := strings.CutPrefix(k, stepOldCampaign+":"); ok {
			if _, err := f.step(ctx, deletedCampaignPrefix+old, func() (string, error) {
				if err := f.pace(ctx); err != nil {
					return "", err
				}
				return old, r.DeleteCampaign(ctx, f.service, old)
			}); err != nil {
				return sms.CampaignState{}, err
			}
		}
	}
	var created *sms.CampaignState
	sid, err := f.step(ctx, stepCampaign, func() (string, error) {
		if err := f.pace(ctx); err != nil {
			return "", err
		}
		c, found, err := r.FindCampaign(ctx, f.service)
		if err == nil && !found {
			if err := f.pace(ctx); err != nil {
				return "", err
			}
			c, err = r.CreateCampaign(ctx, f.service, f.campaignSpec(brandSID))
		}
		created = &c
		return c.SID, err
	})
	if err != nil {
		return sms.CampaignState{}, err
	}
	if created != nil {
		return *created, nil
	}
	if err := f.pace(ctx); err != nil {
		return sms.CampaignState{}, err
	}
	return r.Campaign(ctx, f.service, sid)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// campaignSpec is the campaign as the product describes itself: its samples are two real
// texts in the shop's language (an offer and the answer to a YES), its keywords and
// messages the ones the server answers with. It declares embedded links whenever the
// shop may send one: a checkout shop's answer carries its payment link, and on a server
// that takes payments any shop may switch to checkout after registering (a campaign that
// denied links would then be breached by every link). Its message flow says how this
// product's customers opt in: on the shop's join page or with its join keyword, each
// confirmed by a YES to the confirmation text (Config.Join), or recorded by the shop
// when it adds them; START opts a number in again.
func (f *flow) campaignSpec(brandSID string) sms.Campaign {
	shop := f.shop
	w := texts.In(shop.Language)
	at := sampleTime(shop)
	offer := w.Offer(&shop, "Haircut", at, 3500)
	answer := w.Confirmed(&shop, "Haircut", at)
	links := shop.UsesCheckout() || f.s.cfg.PaymentsEnabled
	if links {
		answer = w.Link(&shop, "Haircut", at, "https://checkout.stripe.com/c/pay/cs_live_a1B2c3", 15*time.Minute)
	}
	optIn := w.OptedIn(&shop)
	flow := "Customers of " + shop.Name + " agree to texts about last-minute openings when they tell the shop so, " +
		"in person, by phone or on its booking form; the shop records that agreement with the customer's number in its " +
		"customer list, and only customers so recorded are texted. A customer may also opt in by texting START to " +
		shop.SMSNumber + ", and is answered: \"" + optIn + "\". Every customer can reply STOP to end the texts and HELP for help; " +
		"message and data rates may apply."
	samples := []string{offer, answer}
	keywords := []string{"START", "UNSTOP"}
	if f.s.cfg.Join != nil {
		// The shop's own join page and keywords, which a third party can visit and try.
		j := f.s.cfg.Join(shop)
		flow = "Customers join " + shop.Name + "'s list of last-minute openings themselves, on its public page " + j.PageURL +
			" (a QR code of it is at the counter): they enter their name and number and tick a box next to the disclosure " +
			"(what the texts are, about how many a week, message and data rates may apply, HELP for help, STOP to cancel, " +
			"consent is not a condition of purchase), or they text " + strings.Join(j.Keywords, ", ") + " to " + shop.SMSNumber +
			". Either way they are sent: \"" + j.Confirmation + "\", and only their reply YES joins them; a request not " +
			"confirmed within 24 hours lapses. The shop may also record customers who agreed in person. A customer may opt in " +
			"again by texting START, and is answered: \"" + optIn + "\". Every customer can reply STOP to end the texts and " +
			"HELP for help."
		samples = append(samples, j.Confirmation)
		keywords = append(keywords, j.Keywords...)
	}
	return sms.Campaign{
		BrandSID: brandSID, SoleProprietor: f.d.soleProprietor(),
		Description: shop.Name + " texts its own customers, who agreed to hear about them, when an appointment " +
			"frees up at short notice; the first to reply YES gets the slot" + map[bool]string{true: " and may get a payment link", false: ""}[links] + ".",
		MessageFlow:      flow,
		Samples:          samples,
		HasEmbeddedLinks: links,
		OptInKeywords:    keywords,
		OptInMessage:     optIn,
		OptOutKeywords:   optOutKeywords,
		OptOutMessage:    w.OptedOut(&shop),
		HelpKeywords:     helpKeywords,
		HelpMessage:      w.Help(&shop),
	}
}

// optOutKeywords and helpKeywords are the campaign's keywords in every language the
// texts are written in, whatever the shop's own: a customer may text in their own
// (internal/replies reads all three), and the carriers' keywords are English. Written
// without accents (ARRET): the keywords are plain letters, and customers' replies are
// read without them.
var (
	optOutKeywords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "BAJA", "ARRET"}
	helpKeywords   = []string{"HELP", "AYUDA", "AIDE"}
)

// sampleTime is a plausible slot for the samples: tomorrow at 15:00, shop time.
func sampleTime(shop shops.Shop) time.Time {
	loc := shop.Location
	if loc == nil {
		loc = time.UTC
	}
	t := time.Now().In(loc).AddDate(0, 0, 1)
	return time.Date(t.Year(), t.Month(), t.Day(), 15, 0, 0, 0, loc)
}

// RegistrationWorker runs jobs.SMSRegistration: it walks the registration and snoozes
// until the next poll.
type RegistrationWorker struct {
	river.WorkerDefaults[jobs.SMSRegistration]
	Service *Service
}

// Work implements river.Worker.
func (w *RegistrationWorker) Work(ctx context.Context, job *river.Job[jobs.SMSRegistration]) error {
	wait, turn, err := w.Service.advanceTurn(ctx, job.Args.ShopID, job.Args.Submission)
	if err != nil {
		return err
	}
	if turn {
		// Back of the queue, behind the registrations that waited meanwhile.
		return river.JobSnooze(0)
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Timeout implements river.Worker: a run is a turn of about a second, its calls waiting
// for the shared rate behind other instances' (a list of brands, a page a second, is
// the longest).
func (w *RegistrationWorker) Timeout(*river.Job[jobs.SMSRegistration]) time.Duration {
	return 3 * time.Minute
}
