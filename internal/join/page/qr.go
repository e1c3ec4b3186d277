package page

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	qrcode "github.com/skip2/go-qrcode"
)

// QRPath is the QR code of a join page, for the counter card by the mirror.
const QRPath = Path + "/qr.svg"

// pageURL is the join page's whole address: PUBLIC_URL's, or the request's host when
// the server has none (local use).
func (p *Page) pageURL(c echo.Context, slug string) string {
	base := strings.TrimRight(p.cfg.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if c.Request().TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request().Host
	}
	return base + "/join/" + slug
}

// qr answers the join page's address as an SVG QR code: one path of the dark modules'
// runs, in a viewBox of modules (the quiet zone included), so it prints sharp at any
// size.
func (p *Page) qr(c echo.Context) error {
	shop, found, err := p.shop(c)
	if err != nil {
		return p.unavailable(c, "find shop", err)
	}
	if !found {
		return c.String(http.StatusNotFound, "no such page")
	}
	code, err := qrcode.New(p.pageURL(c, shop.Slug), qrcode.Medium)
	if err != nil {
		return fmt.Errorf("qr code of shop %s: %w", shop.ID, err)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "image/svg+xml", svg(code.Bitmap()))
}

// svg draws bitmap (bitmap[y][x] dark) as an SVG document.
func svg(bitmap [][]bool) []byte {
	n := len(bitmap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" shape-rendering="crispEdges">`, n, n, n*8, n*8)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range bitmap {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String())
}
