// Package redislock is a small lock on one Redis key, in the spirit of
// github.com/bsm/redislock.
//
// Obtain sets the key to a random token with NX and a TTL; only the holder of
// the token can Release or Refresh it, checked atomically by Lua scripts. A
// lock that is not refreshed expires on its own, so a crashed holder blocks
// others for at most one TTL. Do wraps the whole pattern: obtain, keep the
// lock alive while a function runs, cancel the function if the lock is lost,
// release.
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
