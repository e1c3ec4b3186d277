package shops

import (
	"sync"
	"time"
)

// cacheTTL is how long a shop read for an inbound text is reused. Every text starts by
// finding the shop that owns the number it was sent to: in a storm of replies that is
// the same row thousands of times, and outside storms a short-lived copy was read again
// for nearly every text (one more round trip on every reply's path). The copy is not
// trusted for that long: the statement that stores the text reads the row's version,
// and a copy of another version is read again (Refresh), so a change to the shop is
// seen by the next text on every instance. The number a shop texts from never changes.
const cacheTTL = 10 * time.Minute

// cache holds shops by SMS number for cacheTTL. Unknown numbers are not cached.
type cache struct {
	mu       sync.Mutex
	byNumber map[string]cached
}

type cached struct {
	shop    Shop
	expires time.Time
}

func (c *cache) get(number string, now time.Time) (Shop, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byNumber[number]
	if !ok || now.After(e.expires) {
		return Shop{}, false
	}
	return e.shop, true
}

func (c *cache) put(s Shop, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byNumber == nil || len(c.byNumber) > 10_000 {
		c.byNumber = map[string]cached{} // bounded: a full map starts over
	}
	c.byNumber[s.SMSNumber] = cached{shop: s, expires: now.Add(cacheTTL)}
}

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

// forget drops number's entry, so this instance reads the shop again.
func (c *cache) forget(number string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byNumber, number)
}
