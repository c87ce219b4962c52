// Package turn is the classroom's embedded TURN server (pion/turn): a relay
// for browsers whose networks block direct UDP to the media port. It
// listens on UDP and TCP on the same port number, accepts only short-lived
// credentials made by Credentials (the "TURN REST" scheme), and relays only
// to the peers that Config.AllowPeer accepts (the SFU's own addresses), so
// it is not an open relay.
package turn

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pion/turn/v5"

	"github.com/lectern-lms/lectern/internal/classroom/sfu/pionlog"
)

// Config configures a TURN server.
type Config struct {
	// Addr is the "host:port" to listen on, for UDP and TCP alike. With
	// port 0 a free port is picked for UDP and the same number is tried for
	// TCP; if it is taken there, TCP gets another (see UDPAddr, TCPAddr).
	Addr string

	// PublicIP is the relay address advertised to clients: the address at
	// which the SFU sees relayed packets arrive, and at which clients reach
	// the server. It defaults to the IP of Addr when that is a specific
	// address; it is required when Addr listens on all addresses.
	PublicIP string

	// Realm is the TURN realm; it defaults to "lectern".
	Realm string

	// Secret is the HMAC key of the credentials. Required.
	Secret []byte

	// AllowPeer reports whether the server may relay to a peer IP. Give it
	// the SFU's own IPs (sfu.SFU.OwnsIP). Required: a TURN server that
	// relays anywhere is an open relay.
	AllowPeer func(ip net.IP) bool

	// Logger receives the server's and pion's logs; nil means slog.Default().
	Logger *slog.Logger
}

// ICEServer is one entry of RTCConfiguration.iceServers, as sent to a
// browser.
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username"`
	Credential string   `json:"credential"`
}

// Server is a running TURN server. It is safe for concurrent use.
type Server struct {
	srv    *turn.Server
	udp    net.PacketConn
	tcp    net.Listener
	secret []byte
	log    *slog.Logger

	active, udpAllocs, tcpAllocs, authFailures, refused atomic.Int64
}

// Stats are a TURN server's counters.
type Stats struct {
	Allocations    int64 // allocations open now
	UDPAllocations int64 // allocations made over UDP since the start
	TCPAllocations int64 // allocations made over TCP since the start
	AuthFailures   int64 // requests refused for a bad, forged or expired credential
	PeersRefused   int64 // permissions refused by AllowPeer
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Allocations:    s.active.Load(),
		UDPAllocations: s.udpAllocs.Load(),
		TCPAllocations: s.tcpAllocs.Load(),
		AuthFailures:   s.authFailures.Load(),
		PeersRefused:   s.refused.Load(),
	}
}

// New starts a TURN server.
func New(cfg Config) (*Server, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "turn")
	if len(cfg.Secret) == 0 {
		return nil, errors.New("turn: a secret is required")
	}
	if cfg.AllowPeer == nil {
		return nil, errors.New("turn: AllowPeer is required (the server must not be an open relay)")
	}
	realm := cfg.Realm
	if realm == "" {
		realm = "lectern"
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("turn: address %q: %w", cfg.Addr, err)
	}
	bind := net.ParseIP(host)
	if host != "" && bind == nil {
		return nil, fmt.Errorf("turn: address %q: the host must be an IP address", cfg.Addr)
	}
	relayIP := net.ParseIP(cfg.PublicIP)
	switch {
	case cfg.PublicIP != "" && relayIP == nil:
		return nil, fmt.Errorf("turn: public IP %q is not an IP address", cfg.PublicIP)
	case relayIP == nil && (bind == nil || bind.IsUnspecified()):
		return nil, fmt.Errorf("turn: address %q listens on all addresses, so a public IP is required", cfg.Addr)
	case relayIP == nil:
		relayIP = bind
	}
	relayBind := host
	if relayBind == "" {
		relayBind = "0.0.0.0"
	}

	udp, err := net.ListenPacket("udp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("turn: %w", err)
	}
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	tcp, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(udpPort)))
	if err != nil && port == "0" {
		tcp, err = net.Listen("tcp", cfg.Addr)
	}
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("turn: %w", err)
	}

	s := &Server{udp: udp, tcp: tcp, secret: append([]byte(nil), cfg.Secret...), log: log}
	permit := func(_ net.Addr, peer net.IP) bool {
		if cfg.AllowPeer(peer) {
			return true
		}
		s.refused.Add(1)
		log.Debug("relay refused", "peer", peer.String())
		return false
	}
	relay := func() turn.RelayAddressGenerator {
		return &turn.RelayAddressGeneratorStatic{RelayAddress: relayIP, Address: relayBind}
	}
	srv, err := turn.NewServer(turn.ServerConfig{
		Realm:         realm,
		AuthHandler:   s.auth,
		LoggerFactory: pionlog.Factory(log),
		EventHandler: turn.EventHandler{
			OnAuth: func(src, _ net.Addr, _, username, _, method string, ok bool) {
				if !ok {
					s.authFailures.Add(1)
					log.Debug("TURN credential refused", "from", src.String(), "username", username, "method", method)
				}
			},
			OnAllocationCreated: func(src, _ net.Addr, _, userID, _ string, relay net.Addr, _ int) {
				// protocol is the relayed transport (UDP for WebRTC);
				// the client's transport shows in its address.
				s.active.Add(1)
				transport := "udp"
				if _, ok := src.(*net.TCPAddr); ok {
					transport = "tcp"
					s.tcpAllocs.Add(1)
				} else {
					s.udpAllocs.Add(1)
				}
				log.Debug("TURN allocation", "from", src.String(), "transport", transport, "id", userID, "relay", relay.String())
			},
			OnAllocationDeleted: func(_, _ net.Addr, _, _, _ string) { s.active.Add(-1) },
		},
		PacketConnConfigs: []turn.PacketConnConfig{{
			PacketConn:            udp,
			RelayAddressGenerator: relay(),
			PermissionHandler:     permit,
		}},
		ListenerConfigs: []turn.ListenerConfig{{
			Listener:              tcp,
			RelayAddressGenerator: relay(),
			PermissionHandler:     permit,
		}},
	})
	if err != nil {
		udp.Close()
		tcp.Close()
		return nil, fmt.Errorf("turn: %w", err)
	}
	s.srv = srv
	log.Info("TURN server listening", "udp", udp.LocalAddr().String(), "tcp", tcp.Addr().String(), "relay", relayIP.String())
	return s, nil
}

// UDPAddr returns the bound UDP address.
func (s *Server) UDPAddr() *net.UDPAddr { return s.udp.LocalAddr().(*net.UDPAddr) }

// TCPAddr returns the bound TCP address.
func (s *Server) TCPAddr() *net.TCPAddr { return s.tcp.Addr().(*net.TCPAddr) }

// Close stops the server and closes its allocations and listeners.
func (s *Server) Close() error {
	return s.srv.Close()
}

// password is the credential of a username: base64(HMAC-SHA1(secret, username)).
func (s *Server) password(username string) string {
	mac := hmac.New(sha1.New, s.secret)
	mac.Write([]byte(username))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// auth is pion's AuthHandler: it accepts a username "<unix expiry>:<id>"
// that has not expired, with the key derived from the expected password.
// A forged password then fails the message integrity check (counted in
// the OnAuth event).
func (s *Server) auth(ra *turn.RequestAttributes) (string, []byte, bool) {
	expiry, id, ok := strings.Cut(ra.Username, ":")
	t, err := strconv.ParseInt(expiry, 10, 64)
	if !ok || err != nil || time.Now().Unix() > t {
		s.authFailures.Add(1)
		s.log.Debug("TURN credential refused: expired or malformed", "from", ra.SrcAddr.String(), "username", ra.Username)
		return "", nil, false
	}
	return id, turn.GenerateAuthKey(ra.Username, ra.Realm, s.password(ra.Username)), true
}

// Credentials returns the ICE server entry for a browser: TURN over UDP and
// over TCP at host (the name or IP browsers reach this server at), with a
// username "<unix expiry>:<id>" valid for ttl and its credential
// base64(HMAC-SHA1(secret, username)). id names the holder in logs (a
// connection id, say); it must not be empty.
func (s *Server) Credentials(host, id string, ttl time.Duration) ICEServer {
	username := strconv.FormatInt(time.Now().Add(ttl).Unix(), 10) + ":" + id
	return ICEServer{
		URLs: []string{
			"turn:" + net.JoinHostPort(host, strconv.Itoa(s.UDPAddr().Port)) + "?transport=udp",
			"turn:" + net.JoinHostPort(host, strconv.Itoa(s.TCPAddr().Port)) + "?transport=tcp",
		},
		Username:   username,
		Credential: s.password(username),
	}
}
