// Package offers runs the waves of offers and owns the offers table (slot_offers).
//
// An opening's offers go out in waves, each a River job (jobs.Wave) for one opening,
// generation and wave number:
//
//	wave n: opening still open and before the cutoff?  ── no ──▶ stop (expire if past cutoff)
//	        inside quiet hours?                          ── yes ─▶ snooze to their end
//	        offers recorded for wave n?  ── no ──▶ judge the customers, record the offers
//	                                               (queued, each with its rank and reason),
//	                                               who was left out and why, and schedule
//	                                               wave n+1, in one transaction
//	        text every queued offer: claim it (queued→sending), text, mark sent as
//	        the provider accepts it (only then may its customer's YES claim it)
//
// The claim makes a text at most once per offer however often the job is retried. A
// reopened opening starts a new generation from wave 1. A wave whose instance died is
// resumed by another within a minute (Healer, heal.go): what the dead run left claimed
// is settled, never texted again.
//
// Openings belong to internal/slots: a wave reads them with its own query
// (OpeningForWave) and has one closed past its cutoff by slots, through the Openings
// interface. Other packages change offers through the functions in ledger.go, in their
// own transactions (a cancel closes the untexted offers, a failed payment marks the
// accepted one, a NO declines the newest live one). Replies are
// internal/inbound's; transactional texts are sent by internal/outbox.
//
// The files, by concern:
//
//	offers.go     Config, Service, New and the interfaces the waves need
//	wave.go       a wave's run: RunWave's checks, orphans settled, WaveWorker
//	selection.go  who a wave offers to: one statement judges every customer (the reasons
//	              to leave one out, the shop's ranking of the rest), cooldowns, the
//	              wave's judgement kept (offer_waves), the next wave scheduled
//	reason.go     the reasons: why a customer was left out (Skip) or ranked (Reason), in words
//	record.go     the record read back: an opening's waves (Record), why a customer was
//	              or was not texted (Explain), a customer's offers (History)
//	send.go       texting a wave's offers, chunk by chunk, and the provider's refusals
//	claim.go      claiming offers for sending, and marking them sent as texts are accepted
//	delivery.go   delivery reports applied to offers
//	heal.go       the Healer: waves of dead instances resumed
//	schedule.go   the next scheduled wave of openings (for owners)
//	ledger.go     what other packages change in offers, in their transactions
package offers
