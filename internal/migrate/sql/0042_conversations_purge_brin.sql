-- The retention purge's index on conversations was a btree on last_activity_at alone.
-- Walked backwards and filtered by shop, it also gives an owner's list its order, and
-- on a database the planner knows little of (a fresh machine's first run) it chose
-- that walk over every shop's conversations instead of the shop's own index. A BRIN
-- index serves the purge's range (a periodic batch) and can give no order, so the
-- shop-first indexes (conversations_list_idx, conversations_all_idx) are the only
-- sensible plan for a shop's list.
DROP INDEX IF EXISTS conversations_activity_idx;
CREATE INDEX conversations_purge_idx ON conversations USING brin (last_activity_at);
