// Package redislock is a small lock on one Redis key, in the spirit of
// github.com/bsm/redislock, cut to what the server uses.
//
// Obtain sets the key to a random token with NX and a TTL, in one attempt; only the
// holder of the token can release it (ReleaseAndNotify), checked atomically by a Lua
// script that also publishes a release notice. A Watcher delivers those notices to the
// goroutines waiting for the key, so that a contender waits for the holder's decision
// instead of polling Redis. A lock that is not released expires on its own, so a
// crashed holder blocks others for at most one TTL.
//
// Errors keep two things apart that callers must not confuse:
//
//   - ErrNotObtained: Redis answered, and someone else holds the key.
//   - any other error: Redis did not answer (refused, timed out, context
//     ended mid-command). Nobody knows who holds the key; fail closed.
//
// A lock is a speed-up, never the only guard: an expired lock, a paused
// process or a failover can let two holders overlap, so whatever must never
// happen twice needs its own fence (a database constraint or a conditional
// update).
//
// Every script touches exactly one key, so the package works on a single
// Redis, behind Sentinel, and on Redis Cluster, through any
// redis.UniversalClient.
package redislock
