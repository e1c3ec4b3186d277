// Package cooldown keeps short-lived "cooling down" marks in Redis, one key
// per id: offer_cooldown:<id> holds "1" and expires after a TTL (24 hours by
// default). While the key exists, the id is cooling down.
//
// Cooling checks many ids at once in a single pipeline of EXISTS commands:
// one round trip on a single Redis or behind Sentinel, whatever the number of
// ids. On Redis Cluster the same call is safe (no CROSSSLOT error, since each
// EXISTS names one key): go-redis's cluster pipeline splits the commands by
// master and sends one batch to each master concurrently, so it costs one
// round trip per master, in parallel.
//
// A cooldown is advisory: losing Redis loses the marks, never anything that
// must not happen twice.
package cooldown
