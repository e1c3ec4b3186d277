package dashboard

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// numberCell is what the numeric columns hold: they may start with "-", a number
// never a formula.
var numberCell = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// FuzzExportRecord: whatever names, services, phones, statuses and ids are stored, an
// export row survives a CSV round trip unchanged, and no cell a spreadsheet would run
// as a formula (first character =, +, -, @, tab or CR) reaches the file, apart from
// the amounts and the duration, which are plain numbers, and a masked valid phone
// ("+155******23", digits and asterisks only).
func FuzzExportRecord(f *testing.F) {
	f.Add("Haircut", "Ana Lima", "+15555550123", "filled", "confirmed", "b6c1", int64(4500), int32(30))
	f.Add("=HYPERLINK(\"http://evil\",\"x\")", "+SUM(A1)", "=1+2", "-2", "@cmd", "\tx", int64(-1), int32(-5))
	f.Add("Cut", "Ana", "=cmd|' /C calc'!A0", "filled", "confirmed", "@SUM(1)", int64(100), int32(15))
	f.Add("a,b\"c\nd", "\r\nname", "", "", "", "", int64(0), int32(0))
	f.Add("\xff\xfe", "José “Zé” Ñ", "+1", "\x00", "x\x00y", "=", int64(1<<62), int32(1440))
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, service, name, phoneNum, status, bookingStatus, bookingID string, cents int64, minutes int32) {
		shop := shops.Shop{Timezone: "America/New_York", Location: loc, Currency: "usd", PaymentMode: shops.PaymentCheckout}
		row := db.DashboardFilledExportRow{
			ID: uuid.New(), StartsAt: time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC), DurationMinutes: minutes,
			Service: service, Status: status, CustomerName: name, CustomerPhone: phoneNum,
			BookingID: bookingID, BookingStatus: bookingStatus, AmountCents: cents, FeeCents: cents / 40,
		}
		rec := exportRecord(row, shop)
		if len(rec) != len(exportHeader) {
			t.Fatalf("%d cells for %d columns", len(rec), len(exportHeader))
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		got, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("the export does not read back: %v", err)
		}
		// encoding/csv reads "\r\n" inside a quoted cell back as "\n": compare as a
		// reader sees the cells.
		want := slices.Clone(rec)
		for i := range want {
			want[i] = crlf.ReplaceAllString(want[i], "\n")
		}
		if len(got) != 1 || !slices.Equal(got[0], want) {
			t.Fatalf("round trip changed the row:\n got %q\nwant %q", got, want)
		}
		for i, cell := range got[0] {
			if slices.Contains([]string{"amount", "duration_minutes", "platform_fee", "net_amount"}, exportHeader[i]) {
				if !numberCell.MatchString(cell) {
					t.Fatalf("%s cell %q", exportHeader[i], cell)
				}
				continue
			}
			if exportHeader[i] == "customer_phone_masked" && maskedE164.MatchString(cell) {
				continue // "+", digits and asterisks: inert
			}
			if cell != "" && slices.Contains([]byte("=+-@\t\r"), cell[0]) {
				t.Fatalf("column %s starts a formula: %q", exportHeader[i], cell)
			}
		}
	})
}

var (
	crlf       = regexp.MustCompile(`\r\n`)
	maskedE164 = regexp.MustCompile(`^\+[0-9]{3}\*+[0-9]{2}$`)
)
