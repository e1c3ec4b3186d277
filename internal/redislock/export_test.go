package redislock

// Token returns the random value that marks the key as the lock's, for tests that
// check what Redis holds.
func (l *Lock) Token() string { return l.token }
