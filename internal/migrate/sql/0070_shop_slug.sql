-- 0070_shop_slug: the shop's public name in its join page's address (/join/<slug>),
-- unique across shops (the shops table is the one place a unique index may span shops),
-- and the privacy policy the page's consent disclosure links to (NULL: none set).
-- Existing shops get a slug derived from their name as new shops do (lower case, runs of
-- anything but a-z and 0-9 become one dash; internal/shops.Slugify is the rule), made
-- unique with the start of their id; owners may change it.
ALTER TABLE shops
    ADD COLUMN slug        text CHECK (length(slug) BETWEEN 3 AND 40 AND slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    ADD COLUMN privacy_url text CHECK (length(privacy_url) BETWEEN 9 AND 300 AND privacy_url ~ '^https://[^\s]+$');

WITH derived AS (
    SELECT id, trim(BOTH '-' FROM left(trim(BOTH '-' FROM regexp_replace(lower(name), '[^a-z0-9]+', '-', 'g')), 30)) AS base
    FROM shops
), ranked AS (
    SELECT id, CASE WHEN length(base) < 3 THEN 'shop' ELSE base END AS base
    FROM derived
), numbered AS (
    SELECT id, base, row_number() OVER (PARTITION BY base ORDER BY id) AS n FROM ranked
)
UPDATE shops s SET slug = CASE WHEN r.n = 1 AND r.base <> 'shop' THEN r.base
    ELSE r.base || '-' || left(replace(s.id::text, '-', ''), 8) END
FROM numbered r WHERE r.id = s.id;

-- A shop inserted without one (not through internal/shops, which derives it from the
-- name: a test's or a tool's raw insert) gets a random one.
ALTER TABLE shops ALTER COLUMN slug SET DEFAULT ('shop-' || left(replace(gen_random_uuid()::text, '-', ''), 12)),
    ALTER COLUMN slug SET NOT NULL;
CREATE UNIQUE INDEX shops_slug_key ON shops (slug);
