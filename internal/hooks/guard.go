package hooks

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// maxURL bounds an endpoint's URL.
const maxURL = 2048

// checkURL validates an endpoint URL before it is stored: absolute, https (http too in
// DevMode), a host, no user name or password (they would be sent, and shown, with every
// request; put a token in the path or query instead), no fragment. A host that is an IP
// address, or localhost, is checked against the blocked ranges here already; names are
// checked when each delivery connects (the address they resolve to then is what counts).
func (s *Service) checkURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	bad := func(msg string) error { return problem.Invalidf("url", "%s", msg) }
	if raw == "" || len(raw) > maxURL {
		return "", bad(fmt.Sprintf("url is required, at most %d characters", maxURL))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return "", bad("url must be an absolute URL such as https://example.com/hooks")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !s.cfg.DevMode {
			return "", bad("url must use https")
		}
	default:
		return "", bad("url must use https")
	}
	if u.User != nil {
		return "", bad("url must not carry a user name or password; put a token in its path or query instead")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", bad("url must not have a #fragment")
	}
	host := u.Hostname()
	if !s.cfg.AllowPrivate {
		if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
			return "", bad("url must not point at this machine (localhost)")
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if reason, blocked := blockedAddr(ip); blocked {
				return "", bad(fmt.Sprintf("url must not point at a %s address", reason))
			}
		}
	}
	return u.String(), nil
}

// idleConnTimeout is how long a kept-alive connection to an endpoint waits for the next
// attempt. Receivers drop idle connections early: Node's http server after 5 s
// (keepAliveTimeout), many proxies and load balancers about as soon. A POST written on
// a connection the receiver is closing fails (EOF, connection reset), so the client
// gives up on its idle connections first. (Idempotency-Key, sent on every attempt, lets
// Go's Transport retry a request that still meets one.)
const idleConnTimeout = 4 * time.Second

// maxAnswerHeader bounds the headers of an endpoint's answer (Go's default is 10 MiB):
// an answer's status is all an attempt needs, and a receiver must not make every
// delivery worker buffer megabytes. More is a failed attempt.
const maxAnswerHeader = 32 << 10

// newClient is the HTTP client of every attempt: a guarded dialer, no proxy from the
// environment (it would see the traffic, and make the address check meaningless), no
// redirects followed (a 3xx is a failed attempt), Timeout for the whole exchange, the
// answer's headers capped at maxAnswerHeader, idle connections kept for idleConnTimeout.
func newClient(cfg Config) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: dialGuard(cfg.AllowPrivate)}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: maxAnswerHeader,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    cfg.PerEndpoint,
		IdleConnTimeout:        idleConnTimeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// GuardedClient is the client of the deliveries (newClient): for any other request to an
// address a shop's owner chose (a calendar feed), so that the same addresses are refused
// at every connection and no redirect is followed.
func (s *Service) GuardedClient() *http.Client { return s.client }

// BlockedError is a connection refused because of the address it would reach.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

// Error is what the attempt log shows the shop: the wording of every address that is
// not allowed or cannot be reached (Unreachable), never the address, its kind, or
// whether the name resolved at all. The name the owner gave resolved to it; saying
// more would let a shop map the server's own network (which internal names exist, and
// where they point) one endpoint at a time. Reason is for the server's own log.
func (e *BlockedError) Error() string { return Unreachable }

// Unreachable is what an attempt records when the endpoint's host could not be
// connected to: a name that does not resolve, an address that is blocked, refused or
// unreachable all read alike.
const Unreachable = "not delivered: the host is not allowed or cannot be reached " +
	"(a self-hosted server reaches its own network with WEBHOOK_ALLOW_PRIVATE=1)"

// dialGuard checks the address every connection is about to reach, after the name was
// resolved: a name that resolves (or is re-pointed, DNS rebinding) to a blocked address
// is refused at this point whatever it resolved to before.
func dialGuard(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" {
			return fmt.Errorf("refused to connect over %s", network)
		}
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("refused to connect to %q: %w", address, err)
		}
		if reason, blocked := blockedAddr(ap.Addr()); blocked {
			return &BlockedError{Addr: ap.Addr(), Reason: reason}
		}
		return nil
	}
}

// Metadata services of the cloud providers, which hand out credentials to whoever asks
// from inside (AWS, GCP, Azure, ...: 169.254.169.254; AWS over IPv6: fd00:ec2::254).
var metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// blockedRanges are the ranges netip's predicates do not cover that a delivery must not
// reach: shared (carrier-grade NAT), "this network", IETF protocol assignments,
// benchmarking, documentation, reserved and broadcast, IPv6 discard, documentation,
// Teredo (which tunnels to an IPv4 address of its own choosing), the local-use NAT64
// prefix (RFC 8215: a network's own translator, which may reach anything inside it, and
// whose IPv4 address is not where the well-known prefix has it), IPv4-compatible
// addresses (deprecated; some stacks still route ::a.b.c.d to a.b.c.d) and site-local
// ones (deprecated, but still routed inside some networks).
var blockedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (CGNAT)"},
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 local-use"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// nat64 is the well-known NAT64 prefix (RFC 6052), whose last 32 bits are the IPv4
// address a translator reaches; sixTo4 carries one in bits 16 to 47.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// blockedAddr says whether a delivery may not connect to ip, and why.
func blockedAddr(ip netip.Addr) (reason string, blocked bool) {
	ip = ip.WithZone("").Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	for _, m := range metadataAddrs {
		if ip == m {
			return "cloud metadata", true
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid", true
	case ip.IsUnspecified():
		return "unspecified", true
	case ip.IsLoopback():
		return "loopback", true
	case ip.IsPrivate():
		return "private", true
	case ip.IsLinkLocalUnicast():
		return "link-local", true
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast", true
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.reason, true
		}
	}
	// IPv6 addresses that carry an IPv4 address a gateway will reach: judge that one.
	if ip.Is6() {
		b := ip.As16()
		if nat64.Contains(ip) {
			if reason, blocked := blockedAddr(netip.AddrFrom4([4]byte(b[12:16]))); blocked {
				return reason + " (through NAT64)", true
			}
		}
		if sixTo4.Contains(ip) {
			if reason, blocked := blockedAddr(netip.AddrFrom4([4]byte(b[2:6]))); blocked {
				return reason + " (through 6to4)", true
			}
		}
	}
	return "", false
}
