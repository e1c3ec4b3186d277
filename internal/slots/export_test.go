package slots

// SweepLockKey is the booking sweep's advisory lock, for tests that hold it elsewhere.
const SweepLockKey = sweepLockKey

// ReconcileLockKey is the reconciliation's advisory lock, for tests that hold it
// elsewhere.
const ReconcileLockKey = reconcileLockKey

// Contending reports how many of svc's claims contend for the lock key (its prefix
// included) right now.
func Contending(svc *Service, key string) int { return svc.turns.waiting(key) }
