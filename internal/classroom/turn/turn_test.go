package turn

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	pionturn "github.com/pion/turn/v5"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/sfu"
)

const wait = 20 * time.Second

func testLogger() *slog.Logger {
	if os.Getenv("TURN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

var secret = []byte("test secret")

// setup starts an SFU and a TURN server on loopback that relays only to
// the SFU.
func setup(t *testing.T) (*sfu.SFU, *Server) {
	t.Helper()
	media, err := sfu.New(sfu.Config{UDPAddr: "127.0.0.1:0", Loopback: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { media.Close() })
	srv, err := New(Config{Addr: "127.0.0.1:0", Secret: secret, AllowPeer: media.OwnsIP, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return media, srv
}

func TestRelay(t *testing.T) {
	media, srv := setup(t)
	if srv.UDPAddr().Port != srv.TCPAddr().Port {
		t.Logf("UDP port %d, TCP port %d", srv.UDPAddr().Port, srv.TCPAddr().Port)
	}
	for _, transport := range []string{"udp", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			creds := srv.Credentials("127.0.0.1", "c7", time.Minute)
			var urls []string
			for _, u := range creds.URLs {
				if strings.HasSuffix(u, "?transport="+transport) {
					urls = append(urls, u)
				}
			}
			if len(urls) != 1 {
				t.Fatalf("URLs %v", creds.URLs)
			}
			before := srv.Stats()
			var se webrtc.SettingEngine
			se.SetRelayAcceptanceMinWait(0) // browsers do not wait either
			se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
			se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeTCP4})
			api := webrtc.NewAPI(webrtc.WithSettingEngine(se))
			pc, err := api.NewPeerConnection(webrtc.Configuration{
				ICETransportPolicy: webrtc.ICETransportPolicyRelay,
				ICEServers:         []webrtc.ICEServer{{URLs: urls, Username: creds.Username, Credential: creds.Credential}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			if got := echo(t, media, pc); got != "hello" {
				t.Errorf("echo %q", got)
			}
			pair, err := pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
			if err != nil || pair == nil {
				t.Fatalf("selected pair %v, %v", pair, err)
			}
			if pair.Local.Typ != webrtc.ICECandidateTypeRelay {
				t.Errorf("local candidate %s, want relay", pair.Local)
			}
			after := srv.Stats()
			udp, tcp := after.UDPAllocations-before.UDPAllocations, after.TCPAllocations-before.TCPAllocations
			if transport == "udp" && (udp == 0 || tcp != 0) || transport == "tcp" && (tcp == 0 || udp != 0) {
				t.Errorf("allocations made: %d over UDP, %d over TCP", udp, tcp)
			}
		})
	}
}

// echo runs a connectivity check (sfu.CheckAnswer) from pc and returns the
// echo of "hello".
func echo(t *testing.T, media *sfu.SFU, pc *webrtc.PeerConnection) string {
	t.Helper()
	dc, err := pc.CreateDataChannel("check", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	dc.OnOpen(func() { dc.SendText("hello") })
	dc.OnMessage(func(m webrtc.DataChannelMessage) { got <- string(m.Data) })
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	if !strings.Contains(pc.LocalDescription().SDP, "typ relay") {
		t.Fatalf("no relay candidate gathered:\n%s", pc.LocalDescription().SDP)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	answer, err := media.CheckAnswer(ctx, pc.LocalDescription().SDP)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		return m
	case <-time.After(wait):
		t.Fatal("no echo through the relay")
		return ""
	}
}

// allocate makes a TURN/UDP allocation with the given credentials.
func allocate(t *testing.T, srv *Server, username, password string) (*pionturn.Client, net.PacketConn, error) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: srv.UDPAddr().String(),
		TURNServerAddr: srv.UDPAddr().String(),
		Username:       username,
		Password:       password,
		Conn:           conn,
		RTO:            100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.Listen(); err != nil {
		t.Fatal(err)
	}
	relay, err := c.Allocate()
	if err == nil {
		t.Cleanup(func() { relay.Close() })
	}
	return c, relay, err
}

func TestCredentials(t *testing.T) {
	_, srv := setup(t)
	valid := srv.Credentials("127.0.0.1", "c7", time.Minute)
	if !strings.HasSuffix(valid.Username, ":c7") {
		t.Errorf("username %q", valid.Username)
	}
	expired := strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10) + ":c7"
	tests := []struct {
		name, username, password string
		ok                       bool
	}{
		{"valid", valid.Username, valid.Credential, true},
		{"expired", expired, srv.password(expired), false},
		{"forged", valid.Username, srv.password(valid.Username + "x"), false},
		{"no expiry", "c7", srv.password("c7"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.Stats().AuthFailures
			_, _, err := allocate(t, srv, tt.username, tt.password)
			if tt.ok && err != nil {
				t.Errorf("allocation refused: %v", err)
			}
			if !tt.ok && err == nil {
				t.Error("allocation accepted")
			}
			if !tt.ok && srv.Stats().AuthFailures == before {
				t.Error("refusal not counted")
			}
		})
	}
}

func TestPeerRestriction(t *testing.T) {
	media, srv := setup(t)
	creds := srv.Credentials("127.0.0.1", "c7", time.Minute)
	c, _, err := allocate(t, srv, creds.Username, creds.Credential)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePermission(&net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9}); err == nil {
		t.Error("permission granted for a peer outside AllowPeer")
	}
	if n := srv.Stats().PeersRefused; n != 1 {
		t.Errorf("PeersRefused = %d", n)
	}
	if err := c.CreatePermission(media.UDPAddr()); err != nil {
		t.Errorf("permission refused for the SFU: %v", err)
	}
}

func TestConfig(t *testing.T) {
	allow := func(net.IP) bool { return true }
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"no secret", Config{Addr: "127.0.0.1:0", AllowPeer: allow}, "secret"},
		{"no AllowPeer", Config{Addr: "127.0.0.1:0", Secret: secret}, "open relay"},
		{"all addresses without public IP", Config{Addr: "0.0.0.0:0", Secret: secret, AllowPeer: allow}, "public IP is required"},
		{"bad public IP", Config{Addr: "127.0.0.1:0", PublicIP: "nope", Secret: secret, AllowPeer: allow}, "not an IP"},
		{"host name", Config{Addr: "localhost:0", Secret: secret, AllowPeer: allow}, "IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Logger = testLogger()
			s, err := New(tt.cfg)
			if err == nil {
				s.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q, want %q", err, tt.err)
			}
		})
	}
}
