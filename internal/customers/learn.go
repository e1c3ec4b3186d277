package customers

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
)

// LearnLanguage records that customerID writes in lang, learnt from their own reply,
// unless a language is set already (the owner's choice, or one learnt before, stands).
// It reports whether it recorded it.
func (s *Service) LearnLanguage(ctx context.Context, customerID uuid.UUID, lang language.Code) (bool, error) {
	if _, ok := language.Parse(string(lang)); !ok {
		return false, fmt.Errorf("learn language of customer %s: %q is not supported", customerID, lang)
	}
	n, err := queries.CustomerLearnLanguage(ctx, s.pool, db.CustomerLearnLanguageParams{ID: customerID, Language: string(lang)})
	if err != nil {
		return false, fmt.Errorf("learn language of customer %s: %w", customerID, err)
	}
	return n > 0, nil
}
