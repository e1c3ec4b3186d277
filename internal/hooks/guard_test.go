package hooks

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBlockedAddr: every range a delivery must not reach is refused, however it is
// written (IPv4-mapped, NAT64, 6to4, a zone), and public addresses pass.
func TestBlockedAddr(t *testing.T) {
	t.Parallel()
	blocked := map[string]string{
		"127.0.0.1":              "loopback",
		"127.8.9.10":             "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback",
		"10.0.0.1":               "private",
		"172.31.255.255":         "private",
		"192.168.0.10":           "private",
		"fd12:3456::1":           "private",
		"169.254.169.254":        "cloud metadata",
		"fd00:ec2::254":          "cloud metadata",
		"169.254.1.1":            "link-local",
		"fe80::1%eth0":           "link-local",
		"100.64.0.1":             "carrier-grade NAT (CGNAT)",
		"100.127.255.254":        "carrier-grade NAT (CGNAT)",
		"0.0.0.0":                "unspecified",
		"::":                     "unspecified",
		"0.1.2.3":                `"this network"`,
		"224.0.0.251":            "multicast",
		"ff02::1":                "multicast",
		"255.255.255.255":        "reserved",
		"240.0.0.1":              "reserved",
		"198.18.0.1":             "benchmarking",
		"64:ff9b::a00:1":         "private (through NAT64)",
		"64:ff9b::7f00:1":        "loopback (through NAT64)",
		"2002:a9fe:a9fe::1":      "cloud metadata (through 6to4)",
		"2001:0:4136:e378::1":    "Teredo",
		"2001:db8::1":            "documentation",
		"::ffff:169.254.169.254": "cloud metadata",
		// Blocked outright, whatever they carry: the local-use NAT64 prefix (RFC 8215; its
		// IPv4 address sits elsewhere than the well-known prefix's, and where a gateway
		// sends it is the network's choice), IPv4-compatible addresses (deprecated, ::/96)
		// and site-local ones (deprecated, fec0::/10, still routed inside some networks).
		"64:ff9b:1::808:808": "NAT64 local-use",
		"64:ff9b:1:ffff::1":  "NAT64 local-use",
		"::808:808":          "IPv4-compatible",
		"::7f00:1":           "IPv4-compatible",
		"fec0::1":            "site-local",
		"feff:ffff::1":       "site-local",
	}
	for s, want := range blocked {
		reason, bad := blockedAddr(netip.MustParseAddr(s))
		if !bad || reason != want {
			t.Errorf("%s: got (%q, %v), want (%q, true)", s, reason, bad, want)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "100.128.0.1", "172.32.0.1"} {
		if reason, bad := blockedAddr(netip.MustParseAddr(s)); bad {
			t.Errorf("%s: refused as %s, but it is public", s, reason)
		}
	}
}

// TestDialGuard: the dialer's check refuses a blocked address and networks other than
// TCP, and lets everything through with allowPrivate.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	strict, open := dialGuard(false), dialGuard(true)
	if err := strict("tcp4", "127.0.0.1:443", nil); err == nil {
		t.Error("loopback passed")
	}
	if err := strict("tcp6", "[::1]:443", nil); err == nil {
		t.Error("::1 passed")
	}
	if err := strict("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
	if err := strict("udp4", "93.184.216.34:443", nil); err == nil {
		t.Error("udp passed")
	}
	if err := open("tcp4", "127.0.0.1:443", nil); err != nil {
		t.Errorf("allowPrivate refused loopback: %v", err)
	}
}

// TestFailuresToConnectReadAlike: what an attempt records when it could not connect
// (the owner reads it in the attempt log) is one wording whether the address was
// blocked (of whatever kind), the name did not resolve or the address refused the
// connection: never the address, its kind, the resolver's address, or whether an
// internal name exists; a shop could otherwise map the server's network through DNS
// names. A connection that failed later says how, without the addresses of its ends.
func TestFailuresToConnectReadAlike(t *testing.T) {
	t.Parallel()
	svc := &Service{cfg: Config{Timeout: time.Second}}
	strict := dialGuard(false)
	secret := []string{"10.1.2.3", "127.0.0.1", "fd00:ec2::254", "64:ff9b:1::a00:1", "fec0::2", "127.0.0.53", "db.internal", "192.168.7.9",
		"loopback", "metadata", "no such host", "refused"}
	check := func(what string, err error) {
		t.Helper()
		s := svc.describe(err)
		if s != Unreachable {
			t.Errorf("%s: the attempt records %q; want %q", what, s, Unreachable)
		}
	}
	for _, addr := range []string{"10.1.2.3:443", "127.0.0.1:8080", "[fd00:ec2::254]:80", "[64:ff9b:1::a00:1]:443", "[fec0::2]:443"} {
		err := strict("tcp6", addr, nil)
		if err == nil {
			t.Errorf("%s passed", addr)
			continue
		}
		check(addr, &url.Error{Op: "Post", URL: "https://x.example/hooks", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}})
	}
	check("a name that does not resolve", &url.Error{Op: "Post", URL: "https://db.internal/hooks",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "db.internal", Server: "127.0.0.53:53", IsNotFound: true}}})
	check("a refused connection", &url.Error{Op: "Post", URL: "https://x.example/hooks",
		Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("192.168.7.9"), Port: 443}, Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}})

	reset := svc.describe(&url.Error{Op: "Post", URL: "https://x.example/hooks", Err: &net.OpError{Op: "read", Net: "tcp",
		Source: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 50000}, Addr: &net.TCPAddr{IP: net.ParseIP("192.168.7.9"), Port: 443},
		Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}})
	if reset != syscall.ECONNRESET.Error() {
		t.Errorf("a reset connection records %q; want %q", reset, syscall.ECONNRESET.Error())
	}
	for _, s := range []string{Unreachable, reset} {
		for _, word := range secret {
			if strings.Contains(strings.ToLower(s), word) {
				t.Errorf("%q names %q", s, word)
			}
		}
	}
}

// TestBusyWaitBacksOff: a job that keeps finding its endpoint busy waits longer each
// time, up to about a minute, spread so a backlog does not come back at once.
func TestBusyWaitBacksOff(t *testing.T) {
	t.Parallel()
	s := &Service{cfg: Config{BusyWait: time.Second}}
	first := s.busyWait(nil)
	if first < 750*time.Millisecond || first > 1250*time.Millisecond {
		t.Errorf("first wait %s, want about 1s", first)
	}
	third := s.busyWait([]byte(`{"snoozes": 3}`))
	if third < 6*time.Second || third > 10*time.Second {
		t.Errorf("after 3 waits %s, want about 8s", third)
	}
	for range 100 {
		if long := s.busyWait([]byte(`{"snoozes": 40}`)); long < 45*time.Second || long > 75*time.Second {
			t.Fatalf("a long backlog waits %s, want about a minute", long)
		}
	}
}

// TestDefaultScheduleSpansAboutThreeDays: the Standard Webhooks specification's steps,
// in its order, then 10-hour steps, the last attempt within three days of the first
// and more than two and a half days after it.
func TestDefaultScheduleSpansAboutThreeDays(t *testing.T) {
	t.Parallel()
	spec := []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	var total time.Duration
	for i, d := range DefaultSchedule {
		want := 10 * time.Hour
		if i < len(spec) {
			want = spec[i]
		}
		if d != want {
			t.Errorf("attempt %d after %s, want %s", i+1, d, want)
		}
		total += d
	}
	if total <= 60*time.Hour || total > 72*time.Hour {
		t.Errorf("the last attempt %s after the first, want about three days", total)
	}
}

// TestIdleConnectionsDroppedBeforeReceiversDo: the client keeps an idle connection for
// less than the 5 s after which common receivers (Node's http server) close theirs, so
// an attempt is not written on a connection the receiver is closing.
func TestIdleConnectionsDroppedBeforeReceiversDo(t *testing.T) {
	t.Parallel()
	tr, ok := newClient(Config{Timeout: 10 * time.Second, PerEndpoint: 4}).Transport.(*http.Transport)
	if !ok {
		t.Fatal("the client's transport is not an *http.Transport")
	}
	if tr.IdleConnTimeout <= 0 || tr.IdleConnTimeout >= 5*time.Second {
		t.Fatalf("IdleConnTimeout = %s, want more than 0 and under 5s", tr.IdleConnTimeout)
	}
}
