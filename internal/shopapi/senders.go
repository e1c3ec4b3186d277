package shopapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Each shop's own sender: the admin sets up a number and a Messaging
// Service, the owner submits the US A2P 10DLC registration, and the shop's answers show
// where its sender stands (sms_sender).

// Paths of the sender's routes.
const (
	SenderNumberPath = "/api/shops/:id/sms/number"
	RegistrationPath = "/api/shop/sms/registration"
	adminShopPath    = "/api/shops/:id"
)

// registerSenders adds the sender's routes.
func (h *Handlers) registerSenders(e *echo.Echo) {
	e.GET(adminShopPath, h.adminGetShop, h.requireAdmin)
	// The Idempotency-Key is kept under the shop the path names.
	e.POST(SenderNumberPath, h.provisionNumber, h.requireAdmin, h.pathShop, h.idempotent)
	e.POST(RegistrationPath, h.submitRegistration, h.requireShop)
}

// pathShop loads the shop the admin's path names, for the handlers after it (the
// Idempotency-Key's owner).
func (h *Handlers) pathShop(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			return shops.ErrShopNotFound
		}
		shop, err := h.Shops.Get(c.Request().Context(), id)
		if err != nil {
			return err
		}
		c.Set(shopKey, shop)
		return next(c)
	}
}

// shopView is the shop as GET /api/shop and the admin's routes show it: with its
// sms_sender.
func (h *Handlers) shopView(ctx context.Context, shop shops.Shop) (api.Shop, error) {
	out := h.newShopJSON(shop)
	s := senders.Sender{Number: shop.SMSNumber}
	if h.Senders != nil {
		var err error
		if s, err = h.Senders.Get(ctx, shop); err != nil {
			return api.Shop{}, err
		}
	}
	sender := s.API()
	out.SMSSender = &sender
	var err error
	if out.NotifyPhonePending, err = h.notifyPhonePending(ctx, shop); err != nil {
		return api.Shop{}, err
	}
	if h.Join != nil {
		codes, err := h.Join.AllowedCountries(ctx, shop)
		if err != nil {
			return api.Shop{}, err
		}
		for _, cc := range codes {
			out.JoinCountries = append(out.JoinCountries, "+"+strings.TrimPrefix(cc, "+"))
		}
	}
	return out, nil
}

// adminGetShop is GET /api/shops/{id}: the admin's view of a shop.
func (h *Handlers) adminGetShop(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return shops.ErrShopNotFound
	}
	shop, err := h.Shops.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := h.shopView(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

type numberRequest struct {
	AreaCode    *string `json:"area_code"`
	PhoneNumber *string `json:"phone_number"`
}

// provisionNumber is POST /api/shops/{id}/sms/number: {area_code?} buys a number,
// {phone_number} adopts one of the account; either way the shop gets its own Messaging
// Service. 201 with the shop; 409 when it has its own sender already.
func (h *Handlers) provisionNumber(c echo.Context) error {
	var req numberRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if h.Senders == nil {
		return senders.ErrNoProvider
	}
	shop := shopOf(c)
	ctx := c.Request().Context()
	r := senders.NumberRequest{}
	if req.AreaCode != nil {
		r.AreaCode = *req.AreaCode
	}
	if req.PhoneNumber != nil {
		r.PhoneNumber = *req.PhoneNumber
	}
	if _, err := h.Senders.Provision(ctx, shop.ID, r); err != nil {
		return err
	}
	shop, err := h.Shops.Get(ctx, shop.ID)
	if err != nil {
		return err
	}
	out, err := h.shopView(ctx, shop)
	if err != nil {
		return err
	}
	// The feed's address is a credential: a retry's answer is kept without it (GET
	// /api/shop gives it), so that the idempotency table holds none.
	kept := out
	kept.CalendarURL = ""
	if err := keepForReplay(c, kept); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

type registrationRequest struct {
	BusinessName string `json:"business_name"`
	BusinessType string `json:"business_type"`
	EIN          string `json:"ein"`
	Website      string `json:"website"`
	Address      struct {
		Street     string `json:"street"`
		City       string `json:"city"`
		Region     string `json:"region"`
		PostalCode string `json:"postal_code"`
		Country    string `json:"country"`
	} `json:"address"`
	Contact struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Email     string `json:"email"`
		Phone     string `json:"phone"`
	} `json:"contact"`
}

// submitRegistration is POST /api/shop/sms/registration: the business's details → 202
// and the sms_sender with registration.status submitted; 422 names the field.
func (h *Handlers) submitRegistration(c echo.Context) error {
	var req registrationRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if h.Senders == nil {
		return senders.ErrNoProvider
	}
	d := senders.Details{BusinessName: req.BusinessName, BusinessType: req.BusinessType, EIN: req.EIN, Website: req.Website,
		Address: senders.Address(req.Address), Contact: senders.Contact(req.Contact)}
	s, err := h.Senders.Register(c.Request().Context(), shopOf(c), d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, s.API())
}
