package shopapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// NotifyPhoneConfirmPath confirms the owner's alert number with the code texted to it.
const NotifyPhoneConfirmPath = "/api/shop/notify_phone/confirm"

// ErrNoCodeSender answers a change of the alert number on a server that cannot text.
var ErrNoCodeSender = problem.New(problem.Unavailable, "notify_phone_unavailable", "the alert number cannot be changed on this server: it sends no texts")

// changeNotifyPhone applies an owner's notify_phone: "" (null) ends the alerts; the
// confirmed number again changes nothing; another number waits, with a code texted to
// it in the shop's language, until the code comes back (confirmNotifyPhone). The
// confirmed number, if any, keeps the alerts meanwhile.
func (h *Handlers) changeNotifyPhone(ctx context.Context, shop shops.Shop, number string) (shops.Shop, error) {
	switch {
	case number == "":
		return h.Shops.RemoveNotifyPhone(ctx, shop.ID)
	case number == shop.NotifyPhone:
		return shop, nil
	case h.Queue == nil:
		return shop, ErrNoCodeSender
	}
	words := texts.In(shop.Language)
	_, err := h.Shops.SendNotifyCode(ctx, h.Queue, shop, number, func(code string) string {
		return words.NotifyPhoneCode(&shop, code)
	}, time.Now())
	return shop, err
}

type notifyPhoneConfirmRequest struct {
	Code string `json:"code"`
}

// confirmNotifyPhone is POST /api/shop/notify_phone/confirm: the pending alert number
// becomes the shop's when the code is the one texted to it.
func (h *Handlers) confirmNotifyPhone(c echo.Context) error {
	var req notifyPhoneConfirmRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.Code == "" {
		return problem.Invalidf("code", "code is required: the six digits texted to the alert number")
	}
	shop, err := h.Shops.ConfirmNotifyPhone(c.Request().Context(), shopOf(c).ID, req.Code, time.Now())
	if err != nil {
		return err
	}
	out, err := h.shopView(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// notifyPhonePending is the shop's alert number waiting for its code, for the shop's
// answers; nil for none.
func (h *Handlers) notifyPhonePending(ctx context.Context, shop shops.Shop) (*api.NotifyPhonePending, error) {
	p, ok, err := h.Shops.PendingNotifyPhone(ctx, shop.ID, time.Now())
	if err != nil || !ok {
		return nil, err
	}
	return &api.NotifyPhonePending{Phone: p.Phone, ExpiresAt: p.ExpiresAt.UTC()}, nil
}
