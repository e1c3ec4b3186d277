package book

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Connectors: the booking systems that keep a shop's book. A cal.com or Square
// connector receives its vendor's signed webhooks at connectors.WebhookPath; an ics
// connector names a calendar feed to poll. Each holds one secret, sealed under
// SECRETS_KEY (Config.Secrets) and bound to its shop and itself, so a copy of the
// database alone verifies nothing and a sealed value moved to another row does not open:
//
//   - cal.com: the webhook's secret, made here and shown once (the owner pastes it into
//     cal.com's webhook form);
//   - Square: the subscription's signature key, which Square makes once the subscription
//     names our URL: the owner gives it at creation or later (SetConnectorKey); until
//     then every delivery is refused as unsigned;
//   - ics: the feed's address, whose token is its credential.
//
// The last delivery and its result (DeliveryResult) stay on the connector for the owner.

// MaxConnectors is how many connectors a shop may have.
const MaxConnectors = 10

// Limits of a connector's fields.
const (
	maxConnectorDescription = 200
	maxSignatureKey         = 200
	maxFeedURL              = 2000
	maxDeliveryID           = 400
	maxDeliveryEvent        = 100
)

// ErrConnectorNotFound means the shop has no such connector (or, for a delivery, that
// no connector of the path's kind has the path's id).
var ErrConnectorNotFound = problem.New(problem.NotFound, "connector_not_found", "no such connector")

// DeliveryResult is what became of a connector's delivery, kept as its last.
type DeliveryResult string

// Results of a delivery.
const (
	// ResultApplied: verified, read and recorded in the book.
	ResultApplied DeliveryResult = "applied"
	// ResultDuplicate: a redelivery of one applied before; nothing done again.
	ResultDuplicate DeliveryResult = "duplicate"
	// ResultIgnored: verified, an event the book has no use for.
	ResultIgnored DeliveryResult = "ignored"
	// ResultBadSignature: refused, not signed with the connector's secret (or Square's
	// key is not given yet).
	ResultBadSignature DeliveryResult = "bad_signature"
	// ResultBadPayload: signed, but not the vendor's payload.
	ResultBadPayload DeliveryResult = "bad_payload"
	// ResultRejected: read, but an appointment in it is one the book refuses.
	ResultRejected DeliveryResult = "rejected"
	// ResultFailed: it could not be recorded now (the vendor retries).
	ResultFailed DeliveryResult = "failed"
)

// Connector is one of a shop's booking systems, as the owner sees it (never its secret).
type Connector struct {
	ID          uuid.UUID
	ShopID      uuid.UUID
	Kind        connectors.Source
	Description string
	// HasSecret is false for a Square connector whose signature key is not given yet.
	HasSecret bool
	// HasAPIKey is true when it holds the vendor's API key (SetAPIKey): the shop's moves
	// of its vendor's appointments are written back through the API.
	HasAPIKey bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// LastDelivery is nil before the first.
	LastDelivery *LastDelivery
}

// LastDelivery is a connector's most recent delivery.
type LastDelivery struct {
	At     time.Time
	Event  string
	Result DeliveryResult
}

// NewConnector is what a connector is made from.
type NewConnector struct {
	Kind        connectors.Source
	Description string
	// SignatureKey is Square's subscription signature key ("" to give it later).
	SignatureKey string
	// URL is an ics connector's feed address.
	URL string
}

// Created is a new connector with the secret shown this once: cal.com's webhook secret
// ("" for the other kinds, whose secret the owner gave).
type Created struct {
	Connector Connector
	Secret    string
}

// connectorSealContext binds a sealed secret to its shop and connector.
func connectorSealContext(shopID, id uuid.UUID) []byte {
	return []byte("connectors.secret:" + shopID.String() + ":" + id.String())
}

func (s *Service) sealConnectorSecret(shopID, id uuid.UUID, secret string) (pgtype.Text, error) {
	v, err := s.cfg.Secrets.Seal([]byte(secret), connectorSealContext(shopID, id))
	if err != nil {
		return pgtype.Text{}, fmt.Errorf("seal connector secret: %w", err)
	}
	return pgtype.Text{String: v, Valid: true}, nil
}

func connectorFromRow(r db.Connector) Connector {
	c := Connector{ID: r.ID, ShopID: r.ShopID, Kind: connectors.Source(r.Kind), Description: r.Description,
		HasSecret: r.Secret.Valid, HasAPIKey: r.ApiKey.Valid, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.LastDeliveryAt != nil {
		c.LastDelivery = &LastDelivery{At: r.LastDeliveryAt.UTC(), Event: r.LastDeliveryEvent,
			Result: DeliveryResult(r.LastDeliveryResult)}
	}
	return c
}

// newWebhookSecret is a cal.com webhook secret: 32 random bytes, base64url.
func newWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("connector secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// checkText trims s and refuses it when it is longer than n bytes or not text.
func checkText(field, s string, n int) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > n || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", problem.Invalidf(field, "%s must be text of at most %d bytes", field, n)
	}
	return s, nil
}

func checkSignatureKey(key string) (string, error) {
	k, err := checkText("signature_key", key, maxSignatureKey)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(k, " \t\r\n") {
		return "", problem.Invalidf("signature_key", "signature_key must be the key Square shows for the subscription, without spaces")
	}
	return k, nil
}

// checkFeedURL checks a feed's address: https (its token is its credential, which plain
// http would show to every hop), http too with allowHTTP (development), a host, no user
// name or password. Where it may point is the guard's to say, at every connection.
func checkFeedURL(raw string, allowHTTP bool) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if raw == "" || len(raw) > maxFeedURL || err != nil || (u.Scheme != "https" && (u.Scheme != "http" || !allowHTTP)) ||
		u.Host == "" || u.User != nil {
		return "", problem.Invalidf("url", "url must be the calendar's secret address, https://… (at most %d bytes, no user name or password)", maxFeedURL)
	}
	return raw, nil
}

// CreateConnector adds a connector to shopID. A cal.com connector's secret is made here
// and returned this once (Created.Secret).
func (s *Service) CreateConnector(ctx context.Context, shopID uuid.UUID, n NewConnector) (Created, error) {
	var (
		secret string
		shown  string
		err    error
	)
	switch n.Kind {
	case connectors.SourceCalcom:
		if n.SignatureKey != "" || n.URL != "" {
			return Created{}, problem.Invalidf("kind", "a calcom connector takes no signature_key or url: its secret is made for it")
		}
		if secret, err = newWebhookSecret(); err != nil {
			return Created{}, err
		}
		shown = secret
	case connectors.SourceSquare:
		if n.URL != "" {
			return Created{}, problem.Invalidf("url", "a square connector takes no url: Square posts to its webhook_url")
		}
		if secret, err = checkSignatureKey(n.SignatureKey); err != nil {
			return Created{}, err
		}
	case connectors.SourceICS:
		if n.SignatureKey != "" {
			return Created{}, problem.Invalidf("signature_key", "an ics connector takes no signature_key")
		}
		if secret, err = checkFeedURL(n.URL, s.cfg.AllowHTTPFeeds); err != nil {
			return Created{}, err
		}
	default:
		return Created{}, problem.Invalidf("kind", "kind must be one of calcom, square, ics")
	}
	desc, err := checkText("description", n.Description, maxConnectorDescription)
	if err != nil {
		return Created{}, err
	}
	id := uuid.New()
	p := db.ConnectorInsertParams{ID: id, ShopID: shopID, Kind: string(n.Kind), Description: desc, Now: s.cfg.Now().UTC()}
	if secret != "" {
		if p.Secret, err = s.sealConnectorSecret(shopID, id, secret); err != nil {
			return Created{}, err
		}
	}
	var row db.Connector
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.ConnectorLockShop(ctx, tx, shopID); err != nil {
			return fmt.Errorf("lock shop's connectors: %w", err)
		}
		count, err := queries.ConnectorCountForShop(ctx, tx, shopID)
		if err != nil {
			return fmt.Errorf("count connectors: %w", err)
		}
		if count >= MaxConnectors {
			return &problem.Error{Kind: problem.Conflict, Code: "too_many_connectors",
				Message: fmt.Sprintf("a shop may have at most %d connectors; delete one first", MaxConnectors)}
		}
		if n.Kind == connectors.SourceICS {
			// A feed is a snapshot of the shop's ics appointments: a second feed would read
			// the first one's appointments as gone, and cancel them.
			feeds, err := queries.ConnectorCountKindForShop(ctx, tx, db.ConnectorCountKindForShopParams{ShopID: shopID, Kind: string(n.Kind)})
			if err != nil {
				return fmt.Errorf("count feeds: %w", err)
			}
			if feeds > 0 {
				return &problem.Error{Kind: problem.Conflict, Code: "feed_connector_exists",
					Message: "the shop has a calendar feed already; delete it first (one feed is the shop's whole calendar)"}
			}
		}
		row, err = queries.ConnectorInsert(ctx, tx, p)
		if err != nil {
			return fmt.Errorf("insert connector: %w", err)
		}
		return nil
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Connector: connectorFromRow(row), Secret: shown}, nil
}

// Connectors lists shopID's connectors, oldest first.
func (s *Service) Connectors(ctx context.Context, shopID uuid.UUID) ([]Connector, error) {
	rows, err := queries.ConnectorList(ctx, s.pool, shopID)
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	out := make([]Connector, len(rows))
	for i, r := range rows {
		out[i] = connectorFromRow(r)
	}
	return out, nil
}

// Connector returns shopID's connector id; another shop's is not found.
func (s *Service) Connector(ctx context.Context, shopID, id uuid.UUID) (Connector, error) {
	row, err := queries.ConnectorGet(ctx, s.pool, db.ConnectorGetParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Connector{}, ErrConnectorNotFound
	}
	if err != nil {
		return Connector{}, fmt.Errorf("get connector %s: %w", id, err)
	}
	return connectorFromRow(row), nil
}

// ConnectorChange is an owner's edit of a connector; nil fields stay as they are.
type ConnectorChange struct {
	Description *string
	// SignatureKey gives or replaces a Square connector's signature key (Square makes a
	// new one when the owner rotates it there).
	SignatureKey *string
}

// UpdateConnector applies an owner's change to shopID's connector id.
func (s *Service) UpdateConnector(ctx context.Context, shopID, id uuid.UUID, ch ConnectorChange) (Connector, error) {
	c, err := s.Connector(ctx, shopID, id)
	if err != nil {
		return Connector{}, err
	}
	now := s.cfg.Now().UTC()
	var row db.Connector
	if ch.SignatureKey != nil {
		if c.Kind != connectors.SourceSquare {
			return Connector{}, problem.Invalidf("signature_key", "only a square connector takes a signature_key")
		}
		key, err := checkSignatureKey(*ch.SignatureKey)
		if err != nil {
			return Connector{}, err
		}
		if key == "" {
			return Connector{}, problem.Invalidf("signature_key", "signature_key must not be empty")
		}
		sealed, err := s.sealConnectorSecret(shopID, id, key)
		if err != nil {
			return Connector{}, err
		}
		if row, err = queries.ConnectorSetSecret(ctx, s.pool, db.ConnectorSetSecretParams{ID: id, ShopID: shopID, Secret: sealed, Now: now}); err != nil {
			return Connector{}, s.connectorErr(id, err)
		}
	}
	if ch.Description != nil {
		desc, err := checkText("description", *ch.Description, maxConnectorDescription)
		if err != nil {
			return Connector{}, err
		}
		if row, err = queries.ConnectorSetDescription(ctx, s.pool, db.ConnectorSetDescriptionParams{ID: id, ShopID: shopID, Description: desc, Now: now}); err != nil {
			return Connector{}, s.connectorErr(id, err)
		}
	}
	if row.ID == uuid.Nil {
		return c, nil
	}
	return connectorFromRow(row), nil
}

func (s *Service) connectorErr(id uuid.UUID, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrConnectorNotFound
	}
	return fmt.Errorf("update connector %s: %w", id, err)
}

// DeleteConnector removes shopID's connector id: its deliveries are refused from now
// on; the appointments it brought stay in the book.
func (s *Service) DeleteConnector(ctx context.Context, shopID, id uuid.UUID) error {
	n, err := queries.ConnectorDelete(ctx, s.pool, db.ConnectorDeleteParams{ID: id, ShopID: shopID})
	if err != nil {
		return fmt.Errorf("delete connector %s: %w", id, err)
	}
	if n == 0 {
		return ErrConnectorNotFound
	}
	return nil
}

// Receiver is a connector as a delivery to it needs it: its shop and its opened secret
// ("" for a Square connector whose key is not given yet, which verifies nothing).
type Receiver struct {
	ID     uuid.UUID
	ShopID uuid.UUID
	Kind   connectors.Source
	Secret string
}

// Receiver returns the connector of kind whose id a webhook's path names, with its
// secret opened. A connector of another kind, or none, is ErrConnectorNotFound.
func (s *Service) Receiver(ctx context.Context, kind connectors.Source, id uuid.UUID) (Receiver, error) {
	row, err := queries.ConnectorGetByID(ctx, s.pool, db.ConnectorGetByIDParams{ID: id, Kind: string(kind)})
	if errors.Is(err, pgx.ErrNoRows) {
		return Receiver{}, ErrConnectorNotFound
	}
	if err != nil {
		return Receiver{}, fmt.Errorf("get connector %s: %w", id, err)
	}
	r := Receiver{ID: row.ID, ShopID: row.ShopID, Kind: kind}
	if row.Secret.Valid {
		plain, err := s.cfg.Secrets.Open(row.Secret.String, connectorSealContext(row.ShopID, row.ID))
		if err != nil {
			return Receiver{}, fmt.Errorf("connector %s: the secret cannot be read (SECRETS_KEY): %w", id, err)
		}
		r.Secret = string(plain)
	}
	return r, nil
}

// RecordResult keeps what became of a delivery to connector id as its last. Deliveries
// that were refused are recorded too (the owner sees a wrong secret as such); the
// caller runs it on a context of its own, so a vendor hanging up does not lose it.
func (s *Service) RecordResult(ctx context.Context, id uuid.UUID, event string, result DeliveryResult) error {
	if len(event) > maxDeliveryEvent || !utf8.ValidString(event) {
		event = clip(event, maxDeliveryEvent)
	}
	err := queries.ConnectorRecordResult(ctx, s.pool, db.ConnectorRecordResultParams{
		ID: id, At: s.cfg.Now().UTC(), Event: event, Result: string(result)})
	if err != nil {
		return fmt.Errorf("record delivery of connector %s: %w", id, err)
	}
	return nil
}

// deliveryKey is the id a delivery is remembered by: the vendor's own, or its hash when
// it is longer than the column takes.
func deliveryKey(id string) string {
	if len(id) <= maxDeliveryID && utf8.ValidString(id) && !strings.ContainsRune(id, 0) {
		return id
	}
	h := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(h[:])
}

// ApplyResult is what applying a delivery did.
type ApplyResult struct {
	Result DeliveryResult
	// Results are the book's changes, one per appointment of the delivery recorded
	// (none for a duplicate).
	Results []Result
	// Echoes counts the delivery's appointments that were the vendor's echo of a move
	// written back (writeback.go): recorded in the book already, so left out.
	Echoes int
}

// Apply records a verified delivery to connector r in r's shop's book: each of its
// appointments in order, by Upsert (so a cancellation declares its opening). A delivery
// remembered before (by Delivery.ID) is ResultDuplicate and changes nothing; one without
// appointments is ResultIgnored. The delivery is remembered only once all of it is
// recorded: one that failed midway is applied again when the vendor retries it, which
// the book's order makes harmless. The vendor's echo of a move written back through
// its API changes nothing (ApplyResult.Echoes). Errors are the book's (a problem for an appointment it
// refuses) or a passing failure.
func (s *Service) Apply(ctx context.Context, r Receiver, d connectors.Delivery) (ApplyResult, error) {
	if len(d.Appointments) == 0 {
		return ApplyResult{Result: ResultIgnored}, nil
	}
	for _, a := range d.Appointments {
		if a.Source != r.Kind {
			return ApplyResult{}, fmt.Errorf("connector %s of %s delivered an appointment of %s", r.ID, r.Kind, a.Source)
		}
	}
	key := deliveryKey(d.ID)
	seen, err := queries.ConnectorDeliverySeen(ctx, s.pool, db.ConnectorDeliverySeenParams{ConnectorID: r.ID, DeliveryID: key})
	if err != nil {
		return ApplyResult{}, fmt.Errorf("check delivery %s: %w", r.ID, err)
	}
	if seen {
		return ApplyResult{Result: ResultDuplicate}, nil
	}
	shop, err := s.shops.Get(ctx, r.ShopID)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("shop of connector %s: %w", r.ID, err)
	}
	out := ApplyResult{Result: ResultApplied}
	echoed := map[string]bool{}
	for _, a := range d.Appointments {
		ours, err := s.echo(ctx, r.ShopID, a, echoed)
		if err != nil {
			return out, err
		}
		if ours {
			// The vendor telling us of a move we wrote back: the book has it already.
			out.Echoes++
			continue
		}
		res, err := s.upsert(ctx, shop, a, r.ID)
		if err != nil {
			return out, err
		}
		out.Results = append(out.Results, res)
	}
	if _, err := queries.ConnectorDeliveryInsert(ctx, s.pool, db.ConnectorDeliveryInsertParams{
		ConnectorID: r.ID, DeliveryID: key, ShopID: r.ShopID, Event: clip(d.Event, maxDeliveryEvent), At: s.cfg.Now().UTC(),
	}); err != nil {
		return out, fmt.Errorf("remember delivery of connector %s: %w", r.ID, err)
	}
	return out, nil
}

// CheckConnectorKeys makes sure Config.Secrets (SECRETS_KEY) holds every key a
// connector's secret is sealed under: an error wrapping keyring.ErrUnknownKey when it
// does not (those connectors' deliveries could no longer be verified).
func (s *Service) CheckConnectorKeys(ctx context.Context) error {
	ids, err := queries.ConnectorSecretKeyIDs(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("read connector secrets' keys: %w", err)
	}
	if missing := s.cfg.Secrets.Missing(ids); missing > 0 {
		return fmt.Errorf("%w: SECRETS_KEY lacks %d of the keys that connectors' secrets are sealed under; "+
			"put the previous keys back after the new one (SECRETS_KEY=new,old)", keyring.ErrUnknownKey, missing)
	}
	return nil
}

// DeliveryRetention is how long a connector's deliveries are remembered: longer than
// cal.com and Square retry one (Square for up to a few days).
const DeliveryRetention = 7 * 24 * time.Hour

// PurgeDeliveries forgets, a batch of at most limit, connector deliveries received before
// before (retention.Batch; keep them DeliveryRetention). A redelivery after that is
// applied again, which the book's order makes change nothing.
func PurgeDeliveries(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.ConnectorDeliveryPurge(ctx, conn, db.ConnectorDeliveryPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge connector deliveries: %w", err)
	}
	return n, nil
}

// ResealConnectorSecrets seals every connector's secret not sealed under Config.Secrets'
// newest key anew under it (`server secrets-key reencrypt`): afterwards the older keys
// are no longer needed for connectors. Their API keys too. It returns how many it
// changed.
func (s *Service) ResealConnectorSecrets(ctx context.Context) (int, error) {
	n, err := s.resealSecrets(ctx)
	if err != nil {
		return n, err
	}
	k, err := s.resealAPIKeys(ctx)
	return n + k, err
}

// resealAPIKeys is ResealConnectorSecrets for the connectors' API keys.
func (s *Service) resealAPIKeys(ctx context.Context) (int, error) {
	keep := "sealed1:" + hex.EncodeToString(s.cfg.Secrets.ID()) + ":%"
	n := 0
	for {
		rows, err := queries.ConnectorAPIKeysToSeal(ctx, s.pool, keep)
		if err != nil {
			return n, fmt.Errorf("list connector api keys to seal: %w", err)
		}
		if len(rows) == 0 {
			return n, nil
		}
		changed := 0
		for _, r := range rows {
			plain, err := s.cfg.Secrets.Open(r.ApiKey, apiKeySealContext(r.ShopID, r.ID))
			if err != nil {
				return n, fmt.Errorf("connector %s: the api key cannot be read (SECRETS_KEY): %w", r.ID, err)
			}
			sealed, err := s.cfg.Secrets.Seal(plain, apiKeySealContext(r.ShopID, r.ID))
			if err != nil {
				return n, fmt.Errorf("seal connector api key: %w", err)
			}
			k, err := queries.ConnectorResealAPIKey(ctx, s.pool, db.ConnectorResealAPIKeyParams{ID: r.ID, ApiKey: sealed, OldApiKey: r.ApiKey})
			if err != nil {
				return n, fmt.Errorf("reseal connector %s: %w", r.ID, err)
			}
			changed += int(k)
		}
		n += changed
		if changed == 0 {
			return n, errors.New("book: connector api keys changed while being sealed; run it again")
		}
	}
}

func (s *Service) resealSecrets(ctx context.Context) (int, error) {
	keep := "sealed1:" + hex.EncodeToString(s.cfg.Secrets.ID()) + ":%"
	n := 0
	for {
		rows, err := queries.ConnectorSecretsToSeal(ctx, s.pool, keep)
		if err != nil {
			return n, fmt.Errorf("list connector secrets to seal: %w", err)
		}
		if len(rows) == 0 {
			return n, nil
		}
		changed := 0
		for _, r := range rows {
			plain, err := s.cfg.Secrets.Open(r.Secret, connectorSealContext(r.ShopID, r.ID))
			if err != nil {
				return n, fmt.Errorf("connector %s: the secret cannot be read (SECRETS_KEY): %w", r.ID, err)
			}
			sealed, err := s.sealConnectorSecret(r.ShopID, r.ID, string(plain))
			if err != nil {
				return n, err
			}
			k, err := queries.ConnectorReseal(ctx, s.pool, db.ConnectorResealParams{ID: r.ID, Secret: sealed.String, OldSecret: r.Secret})
			if err != nil {
				return n, fmt.Errorf("reseal connector %s: %w", r.ID, err)
			}
			changed += int(k)
		}
		n += changed
		if changed == 0 {
			// Every row of the batch changed meanwhile (the owner gave a new key): read
			// again, but never spin on rows that keep coming back unchanged.
			return n, errors.New("book: connector secrets changed while being sealed; run it again")
		}
	}
}
