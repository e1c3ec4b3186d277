package slots

// Contending reports how many of svc's claims contend for the lock key (its prefix
// included) right now.
func Contending(svc *Service, key string) int { return svc.turns.waiting(key) }
