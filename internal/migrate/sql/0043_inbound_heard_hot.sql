-- Marking a text's answer heard (InboundMarkAnswered, once for every reply of a storm)
-- was the YES path's costliest statement in Postgres: answered_at was in the unheard
-- index's predicate, so each mark was a non-HOT update that wrote new entries into the
-- table's indexes (3.7 WAL records a text). The predicate now leaves answered_at out
-- (the sweeper filters it on the rows of its window), and pages keep room for the
-- mark's new row version, so the mark is a heap-only update: no index is touched.
ALTER TABLE inbound_messages SET (fillfactor = 70);
DROP INDEX IF EXISTS inbound_messages_unheard_idx;
CREATE INDEX inbound_messages_unheard_idx ON inbound_messages (handled_at)
    WHERE outcome IS NOT NULL AND retold_at IS NULL;
