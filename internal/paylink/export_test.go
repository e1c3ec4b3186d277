package paylink

import "time"

// SetNow makes l read the time from now.
func SetNow(l *Links, now func() time.Time) { l.now = now }
