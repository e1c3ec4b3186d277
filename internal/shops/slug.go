package shops

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Slug bounds, as the shops table's CHECK has them.
const (
	slugMin = 3
	slugMax = 40
	// slugBase leaves room under slugMax for a "-<n>" that makes a default unique.
	slugBase = 30
)

// slugConstraint is the unique index on shops.slug (migration 0070): a violation of it
// is a slug taken, a violation of any other is not.
const slugConstraint = "shops_slug_key"

// ErrSlugTaken is the answer to a change of slug another shop has.
var ErrSlugTaken = &problem.Error{Kind: problem.Conflict, Code: "slug_taken", Field: "slug",
	Message: "another shop already uses this slug"}

// folds spells the accented letters of shop names in English, Spanish and French
// without their accents, so "Peluquería Óscar" becomes "peluqueria-oscar".
var folds = strings.NewReplacer(
	"à", "a", "á", "a", "â", "a", "ä", "a", "ã", "a", "å", "a", "æ", "ae", "ç", "c",
	"è", "e", "é", "e", "ê", "e", "ë", "e", "ì", "i", "í", "i", "î", "i", "ï", "i",
	"ñ", "n", "ò", "o", "ó", "o", "ô", "o", "ö", "o", "õ", "o", "ø", "o", "œ", "oe",
	"ù", "u", "ú", "u", "û", "u", "ü", "u", "ý", "y", "ÿ", "y", "ß", "ss", "&", "-and-",
)

// Slugify derives a slug from a shop's name: lower case, accents dropped, every run of
// anything but a-z and 0-9 one dash, at most 30 characters; "shop" when less than three
// are left. It is the default a new shop gets (made unique by Create).
func Slugify(name string) string {
	name = folds.Replace(strings.ToLower(name))
	var b strings.Builder
	dash := false
	for _, r := range name {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= slugBase {
				break
			}
			continue
		}
		dash = true
	}
	s := strings.Trim(b.String(), "-")
	if len(s) < slugMin {
		return "shop"
	}
	return s
}

// CheckSlug reads an owner's slug: trimmed and lower-cased, 3 to 40 of a-z, 0-9 and
// single dashes between them.
func CheckSlug(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	bad := len(s) < slugMin || len(s) > slugMax || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--")
	for _, r := range s {
		if !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-') {
			bad = true
		}
	}
	if bad {
		return "", problem.Invalidf("slug", "slug must be 3 to 40 letters a-z, digits and single dashes, such as joes-barbers")
	}
	return s, nil
}

// checkPrivacyURL reads the privacy policy's address: "" for none, else an https URL
// of at most 300 characters.
func checkPrivacyURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(s) > 300 || strings.ContainsAny(s, " \t\r\n") {
		return "", problem.Invalidf("privacy_url", "privacy_url must be an https address of at most 300 characters, such as https://joes.example/privacy")
	}
	return s, nil
}

// freeSlug returns base when no shop has it, else base-<n> with n one above the highest
// number a shop's base-<n> has ("shop" is always numbered: it says nothing of the shop).
// A number a renamed shop left is not given again: a link to the old address never
// leads to another shop of the same name.
func (s *Service) freeSlug(ctx context.Context, base string) (string, error) {
	r, err := queries.ShopSlugNumbering(ctx, s.pool, base)
	if err != nil {
		return "", fmt.Errorf("read slugs like %q: %w", base, err)
	}
	if base != "shop" && !r.BaseTaken {
		return base, nil
	}
	return base + "-" + strconv.FormatInt(r.Highest+1, 10), nil
}

// slugTaken reports whether err is a violation of the slugs' unique index.
func slugTaken(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505" && pg.ConstraintName == slugConstraint
}

// BySlug returns the shop whose slug is slug (as CheckSlug reads it), or ErrShopNotFound.
func (s *Service) BySlug(ctx context.Context, slug string) (Shop, error) {
	slug, err := CheckSlug(slug)
	if err != nil {
		return Shop{}, ErrShopNotFound
	}
	row, err := queries.ShopGetBySlug(ctx, s.pool, slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrShopNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("get shop by slug: %w", err)
	}
	return s.fromRow(row)
}
