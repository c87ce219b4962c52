package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Limits of one delivery.
const (
	// Timeout bounds a whole attempt: connecting, sending and reading the
	// answer.
	Timeout = 15 * time.Second
	// MaxResponse is how much of an answer is read; the rest is dropped
	// (only the status matters).
	MaxResponse = 64 << 10
)

// ErrForbiddenAddress is the error of a connection to an address the
// policy refuses.
var ErrForbiddenAddress = errors.New("address not allowed")

// nonPublic are ranges that are not public unicast beyond what netip's
// predicates name: shared address space (carrier-grade NAT), "this
// network", IETF protocol assignments, benchmarking, reserved and
// NAT64's well-known prefix (which reaches IPv4 addresses inside).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Allowed reports whether a webhook may connect to ip: public unicast
// only, so no private, loopback, link-local, multicast, unspecified or
// other special-purpose address. An IPv4 address inside IPv6 is judged as
// IPv4.
func Allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// control runs on every socket before it connects, after name
// resolution, so the address checked is the one connected to: a name
// that resolves to a public address when checked and a private one when
// used (DNS rebinding) cannot get through.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !Allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address (the operator can allow it with --webhook-allow-private)", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// NewClient returns the HTTP client deliveries use: no proxy (a proxy
// would connect on our behalf, past the address check), no redirects
// (a 3xx is a failed attempt), a time limit per attempt, and, unless
// allowPrivate, connections to public addresses only.
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = control
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  10 * time.Second,
		MaxIdleConns:           20,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
