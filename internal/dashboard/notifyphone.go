package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// NotifyPhoneConfirmPath takes the code texted to a new alert number.
const NotifyPhoneConfirmPath = "/dashboard/settings/notify-phone"

// notifyViewOf is the shop's alert number waiting for its code, as the settings page
// shows it; nil for none.
func (d *Dashboard) notifyViewOf(c echo.Context, shop shops.Shop) (*notifyView, error) {
	p, ok, err := d.shops.PendingNotifyPhone(c.Request().Context(), shop.ID, d.cfg.Now())
	if err != nil || !ok {
		return nil, err
	}
	loc := shop.Location
	if loc == nil {
		loc = time.UTC
	}
	return &notifyView{Phone: p.Phone, Until: p.ExpiresAt.In(loc).Format("15:04")}, nil
}

// changeNotifyPhone applies the settings form's alert number: empty ends the alerts,
// the confirmed number changes nothing, another one is texted a code and waits for it
// (the confirmed number keeps the alerts meanwhile). It returns the page's notice.
func (d *Dashboard) changeNotifyPhone(c echo.Context, shop shops.Shop, number string) (string, error) {
	ctx := c.Request().Context()
	switch {
	case number == "":
		if shop.NotifyPhone == "" {
			return "saved", nil
		}
		_, err := d.shops.RemoveNotifyPhone(ctx, shop.ID)
		return "saved", err
	case number == shop.NotifyPhone:
		return "saved", nil
	case d.cfg.Queue == nil:
		return "", problem.Invalidf("notify_phone", "this server sends no texts, so it cannot confirm a new alert number")
	}
	words := texts.In(shop.Language)
	_, err := d.shops.SendNotifyCode(ctx, d.cfg.Queue, shop, number, func(code string) string {
		return words.NotifyPhoneCode(&shop, code)
	}, d.cfg.Now())
	return "code_sent", err
}

// confirmNotifyPhone takes the code texted to the waiting alert number.
func (d *Dashboard) confirmNotifyPhone(c echo.Context) error {
	s := current(c)
	code := strings.TrimSpace(c.FormValue("code"))
	_, err := d.shops.ConfirmNotifyPhone(c.Request().Context(), s.Shop.ID, code, d.cfg.Now())
	if err == nil {
		d.logger(c).Info("dashboard alert number confirmed", "shop_id", s.Shop.ID)
		return c.Redirect(http.StatusSeeOther, "/dashboard/settings?notice=notify_confirmed")
	}
	p, ok := problem.As(err)
	if !ok {
		return d.internalError(c, "confirm alert number", err)
	}
	v := settingsView{SMS: s.Shop.SMSNumber, Form: settingsFormOf(s.Shop), Stripe: stripeViewOf(s.Shop),
		Sender: d.senderViewOf(c.Request().Context(), s.Shop), Join: d.joinViewOf(s.Shop)}
	if v.Notify, err = d.notifyViewOf(c, s.Shop); err != nil {
		return d.internalError(c, "read pending alert number", err)
	}
	msg := friendlySetting(p)
	if v.Notify == nil {
		// No code waits any more: say why beside the alert number's field.
		v.Form.Errors = map[string]string{"notify_phone": msg}
	} else {
		v.Notify.Error = msg
	}
	return d.render(c, http.StatusUnprocessableEntity, "Check the code · "+s.Shop.Name, v)
}
