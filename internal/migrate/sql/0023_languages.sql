-- 0023_languages: each shop texts in its language (en, es, fr), and each customer in
-- theirs when it is known (NULL: the shop's). A customer's language is set by the
-- owner (API, import, dashboard) or learnt from their own reply, when its words belong
-- to exactly one supported language.
ALTER TABLE shops ADD COLUMN language text NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'es', 'fr'));
ALTER TABLE customers ADD COLUMN language text CHECK (language IN ('en', 'es', 'fr'));
