-- 0081: a customer's PAUSE by text, and a shop's own join keywords (issue 46).
-- paused_until: a customer who texted PAUSE gets no offers before it (a wave counts them
-- as skipped, reason paused); RESUME clears it. NULL: not paused.
ALTER TABLE customers ADD COLUMN paused_until timestamptz;
-- join_keywords: the words (upper case, 2 to 20 letters or digits, at most 5) a text may
-- be to ask to join the shop's list, besides the defaults JOIN, UNIRME and INSCRIRE
-- (internal/join, internal/shops).
ALTER TABLE shops ADD COLUMN join_keywords text[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(join_keywords) <= 5);
