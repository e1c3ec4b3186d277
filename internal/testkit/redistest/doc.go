// Package redistest gives tests a real Redis to talk to: a client for the
// shared server named by TEST_REDIS_URL with a key prefix of their own, a
// throwaway three-master Redis Cluster, and a client that can never connect.
//
// Every test gets keys under its own prefix ("test:<random hex>:"), and
// t.Cleanup deletes exactly those keys; nothing here ever runs FLUSHDB or
// FLUSHALL, so tests can share a server with each other and with people.
//
// It is imported only by _test.go files.
package redistest
