package api

import "github.com/google/uuid"

// StaffMember is a person of the shop as /api/staff shows them. An opening names its
// person by Staff, their id and name.
type StaffMember struct {
	ID     uuid.UUID `json:"id"`
	Name   string    `json:"name"`
	Active bool      `json:"active"`
}

// Service is a service as the API shows it; staff_ids empty: anyone does it.
type Service struct {
	ID              uuid.UUID   `json:"id"`
	Name            string      `json:"name"`
	DurationMinutes int         `json:"duration_minutes"`
	PriceCents      int64       `json:"price_cents"`
	StaffIDs        []uuid.UUID `json:"staff_ids"`
	Active          bool        `json:"active"`
}

// StaffList is GET /api/staff's answer.
type StaffList struct {
	Staff []StaffMember `json:"staff"`
}

// ServiceList is GET /api/services' answer.
type ServiceList struct {
	Services []Service `json:"services"`
}
