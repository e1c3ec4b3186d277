// Package offers runs the offer loop and reads customers' replies.
//
// An opening's offers go out in waves, each a River job (jobs.Wave) for one opening,
// generation and wave number:
//
//	wave n: opening still open and before the cutoff?  ── no ──▶ stop (expire if past cutoff)
//	        inside quiet hours?                          ── yes ─▶ snooze to their end
//	        offers recorded for wave n?  ── no ──▶ pick eligible customers, record them
//	                                               (queued) and schedule wave n+1, in one
//	                                               transaction
//	        text every queued offer: claim it (queued→sending), text, mark sent
//
// The claim makes a text at most once per offer however often the job is retried. A
// reopened opening starts a new generation from wave 1. Replies (YES, NO, STOP, START,
// HELP) are stored by MessageSid before anything else, so a redelivery gets the first
// answer and changes nothing.
package offers
