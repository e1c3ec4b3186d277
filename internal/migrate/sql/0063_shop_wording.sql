-- 0063_shop_wording: how a shop's texts are worded (internal/texts). formality: how they
-- address customers, NULL for the language's default (informal tú in Spanish, formal vous
-- in French). gsm7: prefer folds accents outside GSM-7 where that saves a segment, exact
-- keeps them. help_contact: how customers reach the shop, given in the HELP answer; NULL
-- gives the shop's SMS number.
ALTER TABLE shops
    ADD COLUMN formality    text CHECK (formality IN ('informal', 'formal')),
    ADD COLUMN gsm7         text NOT NULL DEFAULT 'prefer' CHECK (gsm7 IN ('prefer', 'exact')),
    ADD COLUMN help_contact text CHECK (length(help_contact) BETWEEN 1 AND 100);
