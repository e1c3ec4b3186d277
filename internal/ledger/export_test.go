package ledger

// SweepLockKey is the booking sweep's advisory lock, for tests that hold it elsewhere.
const SweepLockKey = sweepLockKey

// ReconcileLockKey is the reconciliation's advisory lock, for tests that hold it
// elsewhere.
const ReconcileLockKey = reconcileLockKey
