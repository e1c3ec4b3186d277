// Package api holds the OpenAPI 3.1 document of the shop owners' JSON API
// (openapi.json), which the server serves at /api/openapi.json and the shop API's tests
// hold the routes and real answers to.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document, as JSON.
//
//go:embed openapi.json
var OpenAPI []byte
