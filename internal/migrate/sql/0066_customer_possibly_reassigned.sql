-- 0066_customer_possibly_reassigned: when a customer's number answered "wrong number"
-- (an opt-out that also says the number may have changed hands), so the owner can check
-- with the customer; the owner clears it. NULL: no such answer since the last clear.
ALTER TABLE customers ADD COLUMN possibly_reassigned_at timestamptz;
