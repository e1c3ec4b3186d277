package dashboard

import (
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
)

// Limit is a token bucket: Burst events at once, then one more every Every.
type Limit = ratelimit.Limit

// The sign-in limits' keys (under the Redis key prefix, see ratelimit.Config). They
// are counted in Redis, so every instance behind a load balancer draws on the same
// buckets: N instances allow together what one allows.
func signInClientKey(ip string) string { return "dashboard_sign_in:client:" + ratelimit.ClientKey(ip) }

func signInShopKey(shopID string) string { return "dashboard_sign_in:shop:" + shopID }
