// Package api is the wire of the shop owners' JSON API and of the outbound webhook
// events: one Go type per object, each naming its JSON fields with explicit tags, which
// the API answers with and the events carry as their data (an event shows an object
// exactly as the API does), and the OpenAPI 3.1 document (openapi.json), which the
// server serves at /api/openapi.json and the shop API's tests hold the routes and real
// answers to.
//
// Fields may be added, never renamed or removed: receivers read them, and events are
// stored rendered (internal/hooks renders an event's data with these types when it is
// recorded).
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document, as JSON.
//
//go:embed openapi.json
var OpenAPI []byte
