package main

import (
	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/delivery"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/retention"
)

// purges lists every table the retention applies to, each purged by its owner package
// (internal/retention runs them and knows none of them).
func purges(cfg config.Config) []retention.Purge {
	return []retention.Purge{
		{Table: "stripe_events", Batch: ledger.PurgeStripeEvents},
		{Table: "inbound_messages", Batch: inbound.Purge},
		{Table: "text_claims", Batch: outbox.PurgeClaims},
		{Table: "delivery_reports", Batch: delivery.Purge},
		// Outbound webhook events, with their deliveries and attempts: what the owner
		// can look back on (30 days), whatever RETENTION_DAYS says.
		{Table: "webhook_events", Batch: hooks.Purge, Keep: hooks.Retention},
		// An Idempotency-Key is answered again for 24 hours, then never.
		{Table: "idempotency_keys", Batch: idempotency.Purge, Keep: idempotency.TTL},
		// The owner's inbox: conversations idle for INBOX_RETENTION_DAYS, and older texts.
		{Table: "conversations", Batch: inbox.Purge, Keep: cfg.InboxRetention},
		// The connectors' deliveries, remembered to acknowledge a redelivery.
		{Table: "connector_deliveries", Batch: book.PurgeDeliveries, Keep: book.DeliveryRetention},
		// Join requests, an hour after they expired (a confirmed one's proof is in the
		// consent record): an unconfirmed one leaves no name or number behind.
		{Table: "join_requests", Batch: join.Purge, Keep: join.PurgeAfter},
		// The join page's refusal counts and the hours its budget was spent: the
		// dashboard's last weeks, then nothing.
		{Table: "join_refusals", Batch: join.PurgeRefusals, Keep: join.RefusalsKeep},
		{Table: "join_budget_spent", Batch: join.PurgeBudgetSpent, Keep: join.RefusalsKeep},
	}
}
