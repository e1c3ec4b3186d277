package shops

import (
	"sync"
	"time"
)

// locations caches time zones: time.LoadLocation reads the zone file from disk on every
// call.
var locations sync.Map // string → *time.Location

func loadLocation(name string) (*time.Location, error) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, l)
	return l, nil
}
