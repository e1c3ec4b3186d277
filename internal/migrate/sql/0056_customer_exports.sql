-- 0056_customer_exports: every export of the customer list with whole phone numbers,
-- which the owner confirms with the shop's key and can read back on the customers
-- page (when, from which browser, how many customers; NULL: the download did not
-- finish). No customer's data is in it.
CREATE TABLE customer_exports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id     uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    user_agent  text NOT NULL DEFAULT '' CHECK (length(user_agent) <= 200),
    customers   integer CHECK (customers >= 0)
);
CREATE INDEX customer_exports_shop_idx ON customer_exports (shop_id, at DESC);
