-- 0013_answers_heard: an answer that was stored but never reached the customer is texted.
--
-- A text's answer is stored before it is written back to Twilio, and Twilio does not
-- retry a webhook: an instance killed between the two left the customer without the
-- answer, and the sweeper, which finishes only texts without a stored answer, never
-- knew. Now the answer is marked once it has been written back (answered_at), and the
-- sweeper texts the stored answers that were neither marked nor texted before
-- (retold_at) a little after they were stored.

-- When the answer was written back in time to reach the customer: the HTTP answer was
-- flushed within Twilio's wait (or a redelivery's replay of it was). NULL: not yet, or
-- never. The default, the epoch (1970-01-01), marks the rows of a server that does not
-- mark answers: those already stored when this runs, and those that instances still on
-- the previous version store during a rolling deploy. They count as answered long ago,
-- so the sweeper does not text every answer of the last half hour again. The current
-- server stores its texts with answered_at NULL and marks them. (Not -infinity: Go's
-- time.Time cannot hold it, and every reader of the row would fail.)
ALTER TABLE inbound_messages ADD COLUMN answered_at timestamptz DEFAULT 'epoch';

-- When the sweeper took over telling the customer the answer by text: it queued the
-- stored answer (or the answer it decided itself, for a text it took over), or found
-- there was nothing left to tell (a booking the customer had already been told of).
-- Set in the transaction that queues the text, so the text is queued once.
ALTER TABLE inbound_messages ADD COLUMN retold_at timestamptz;

-- The booking a booked answer tells of: a text sent later in its place marks the booking
-- told, and is not sent when the customer has been told of it already. No foreign key,
-- for the reason 0005 gives for shop_id.
ALTER TABLE inbound_messages ADD COLUMN booking_id uuid;

-- The stored answers not known to have reached their customer, for the sweeper. A row
-- enters when its answer is stored and leaves when it is marked a few milliseconds
-- later, so the index holds the answers in flight and the lost ones, never the whole
-- log. The price is on HOT updates: answered_at is in the predicate, so marking an
-- answer is never a HOT update (each mark writes a new row version and a new primary key
-- entry), and storing the answer, already not HOT because outcome is in the predicate
-- of inbound_messages_unanswered_idx, now also adds an entry here. An index on every
-- handled row would leave the mark eligible for HOT, but a row of this append-mostly
-- table, filled to fillfactor 100 during a storm, rarely has room left on its page, and
-- the sweeper would read every answer of its window to find the few lost ones. Building
-- the index reads the table once (inserts wait for it); every existing row has
-- answered_at set to the epoch, so it starts empty.
CREATE INDEX inbound_messages_unheard_idx ON inbound_messages (handled_at)
    WHERE outcome IS NOT NULL AND answered_at IS NULL AND retold_at IS NULL;
