package logging_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/logging"
)

// TestAtLeast: a library's logger keeps its warnings and errors and drops its routine
// info lines, while the server's own logger at info keeps its events; attributes and
// groups added later keep the floor.
func TestAtLeast(t *testing.T) {
	var buf bytes.Buffer
	server := logging.New(&buf, "info")
	river := logging.AtLeast(server, slog.LevelWarn).With("component", "river")
	ctx := context.Background()
	river.InfoContext(ctx, "producer: queue status", "queue", "texts")
	river.WarnContext(ctx, "job rescued")
	river.WithGroup("g").InfoContext(ctx, "also routine")
	server.InfoContext(ctx, "opening declared")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"job rescued"`) || !strings.Contains(lines[0], `"component":"river"`) ||
		!strings.Contains(lines[1], `"opening declared"`) {
		t.Fatalf("logged:\n%s\nwant the river warning (with its component) and the server's event only", buf.String())
	}
}
