package offers

import "context"

// ApplyDeliveries lets the tests apply a chunk's stored reports as the wave does once it
// has stored the chunk's message ids.
func (s *Service) ApplyDeliveries(ctx context.Context, sids []string) error {
	return s.applyDeliveries(ctx, sids)
}
