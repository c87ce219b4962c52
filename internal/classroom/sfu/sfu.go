// Package sfu is the media layer of the live classroom: a selective
// forwarding unit built on pion/webrtc.
//
// Every stream travels on its own RTCPeerConnection and the offerer is always
// the sender (the Galene model): a client publishes a stream by offering, and
// the server forwards each published stream to every other user's connection
// with a PeerConnection of its own, offered by the server. Packets are
// forwarded as they are; there is no mixing or transcoding. Only VP8 video
// and Opus audio are accepted.
//
// All PeerConnections share one UDP port (an ICE UDP mux), so a deployment
// opens a single UDP port for media (plus the optional embedded TURN server
// of package turn).
//
// An SFU holds any number of Rooms, one per live class sitting. The room
// service talks to a Room with plain method calls and hears back through two
// callbacks: send (a signalling message for one connection's WebSocket) and
// events (stream life the room service did not cause itself).
package sfu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"

	"github.com/lectern-lms/lectern/internal/classroom/sfu/pionlog"
)

// Config configures an SFU.
type Config struct {
	// UDPAddr is the "host:port" of the single ICE UDP port. Port 0 picks a
	// free port (see SFU.UDPAddr). A host of "" or "::" listens on IPv4 and
	// IPv6, "0.0.0.0" on IPv4 only; a specific address on that address only.
	UDPAddr string

	// PublicIPs are the 1:1 NAT public IPs advertised in host candidates
	// instead of the local addresses (the --rtc-public-ip flag). Empty
	// advertises the local addresses.
	PublicIPs []string

	// Loopback offers loopback candidates (127.0.0.1, ::1). Tests and local
	// development need it: without it nothing connects over loopback, not
	// even with UDPAddr bound to 127.0.0.1.
	Loopback bool

	// Logger receives the SFU's and pion's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Limits.
const (
	// maxChecks is the number of connectivity-check PeerConnections that
	// may be open at once.
	maxChecks = 20
	// checkLifetime is how long a connectivity-check PeerConnection lives.
	checkLifetime = 30 * time.Second
	// keyframeInterval is the shortest time between two keyframe requests
	// sent to one publisher's video track.
	keyframeInterval = 500 * time.Millisecond
)

// SFU is a selective forwarding unit: the pion API configured for the
// classroom, the shared UDP port, and the rooms that use them. It is safe
// for concurrent use.
type SFU struct {
	log    *slog.Logger
	conn   *net.UDPConn
	mux    ice.UDPMux
	api    *webrtc.API
	public []net.IP
	checks chan struct{} // semaphore of maxChecks

	mu     sync.Mutex
	closed bool
	rooms  map[*Room]struct{}
	probes map[*webrtc.PeerConnection]struct{} // open connectivity checks
}

// New binds the UDP port and prepares the WebRTC API.
func New(cfg Config) (*SFU, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "sfu")

	host, _, err := net.SplitHostPort(cfg.UDPAddr)
	if err != nil {
		return nil, fmt.Errorf("sfu: UDP address %q: %w", cfg.UDPAddr, err)
	}
	network := "udp"
	var types []webrtc.NetworkType
	switch ip := net.ParseIP(host); {
	case host == "" || host == "::":
		types = []webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6}
	case ip == nil:
		return nil, fmt.Errorf("sfu: UDP address %q: the host must be an IP address", cfg.UDPAddr)
	case ip.To4() != nil:
		network = "udp4"
		types = []webrtc.NetworkType{webrtc.NetworkTypeUDP4}
	default:
		network = "udp6"
		types = []webrtc.NetworkType{webrtc.NetworkTypeUDP6}
	}
	var public []net.IP
	for _, s := range cfg.PublicIPs {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("sfu: public IP %q is not an IP address", s)
		}
		public = append(public, ip)
	}

	addr, err := net.ResolveUDPAddr(network, cfg.UDPAddr)
	if err != nil {
		return nil, fmt.Errorf("sfu: UDP address %q: %w", cfg.UDPAddr, err)
	}
	conn, err := net.ListenUDP(network, addr)
	if err != nil {
		return nil, fmt.Errorf("sfu: %w", err)
	}

	logs := pionlog.Factory(log)
	mux := webrtc.NewICEUDPMux(logs.NewLogger("udpmux"), conn)

	var se webrtc.SettingEngine
	se.LoggerFactory = logs
	se.SetICEUDPMux(mux)
	se.SetNetworkTypes(types)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.DisableActiveTCP(true)
	se.SetIncludeLoopbackCandidate(cfg.Loopback)
	if len(cfg.PublicIPs) > 0 {
		err := se.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{
			External:        cfg.PublicIPs,
			AsCandidateType: webrtc.ICECandidateTypeHost,
			Mode:            webrtc.ICEAddressRewriteReplace,
		})
		if err != nil {
			mux.Close()
			conn.Close()
			return nil, fmt.Errorf("sfu: public IPs: %w", err)
		}
	}

	me, ir, err := newMediaEngine()
	if err != nil {
		mux.Close()
		conn.Close()
		return nil, fmt.Errorf("sfu: %w", err)
	}
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(ir))

	s := &SFU{
		log:    log,
		conn:   conn,
		mux:    mux,
		api:    api,
		public: public,
		checks: make(chan struct{}, maxChecks),
		rooms:  make(map[*Room]struct{}),
		probes: make(map[*webrtc.PeerConnection]struct{}),
	}
	log.Info("media port open", "udp", conn.LocalAddr().String())
	return s, nil
}

// Header extensions that the server negotiates and passes from publisher to
// subscribers, with ids mapped between the two PeerConnections. Hop-by-hop
// extensions (transport-cc, mid, rid) are never passed on.
const (
	audioLevelURI       = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
	videoOrientationURI = "urn:3gpp:video-orientation"
)

// newMediaEngine registers VP8 and Opus, the forwarded header extensions and
// pion's default interceptors (NACK generator and responder, RTCP sender and
// receiver reports, TWCC, stats).
func newMediaEngine() (*webrtc.MediaEngine, *interceptor.Registry, error) {
	me := &webrtc.MediaEngine{}
	video := webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType:  webrtc.MimeTypeVP8,
			ClockRate: 90000,
			RTCPFeedback: []webrtc.RTCPFeedback{
				{Type: webrtc.TypeRTCPFBCCM, Parameter: "fir"},
				{Type: webrtc.TypeRTCPFBNACK, Parameter: "pli"},
			},
		},
		PayloadType: 96,
	}
	audio := webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType:    webrtc.MimeTypeOpus,
			ClockRate:   48000,
			Channels:    2,
			SDPFmtpLine: "minptime=10;useinbandfec=1",
		},
		PayloadType: 111,
	}
	if err := me.RegisterCodec(video, webrtc.RTPCodecTypeVideo); err != nil {
		return nil, nil, err
	}
	if err := me.RegisterCodec(audio, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, nil, err
	}
	exts := []struct {
		uri  string
		kind webrtc.RTPCodecType
	}{
		{audioLevelURI, webrtc.RTPCodecTypeAudio},
		{videoOrientationURI, webrtc.RTPCodecTypeVideo},
	}
	for _, e := range exts {
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: e.uri}, e.kind); err != nil {
			return nil, nil, err
		}
	}
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(me, ir); err != nil {
		return nil, nil, err
	}
	return me, ir, nil
}

// UDPAddr returns the address of the bound ICE UDP port.
func (s *SFU) UDPAddr() *net.UDPAddr {
	return s.conn.LocalAddr().(*net.UDPAddr)
}

// OwnsIP reports whether ip is an address that the SFU's candidates may
// carry: one of the public IPs, the bound address, or, when bound to all
// addresses, any address of this host. It fits turn.Config.AllowPeer, so
// the embedded TURN server relays only to this SFU.
func (s *SFU) OwnsIP(ip net.IP) bool {
	for _, p := range s.public {
		if p.Equal(ip) {
			return true
		}
	}
	bound := s.UDPAddr().IP
	if !bound.IsUnspecified() {
		return bound.Equal(ip)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Close closes every room and connectivity check, then the UDP port.
func (s *SFU) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	rooms := make([]*Room, 0, len(s.rooms))
	for r := range s.rooms {
		rooms = append(rooms, r)
	}
	probes := make([]*webrtc.PeerConnection, 0, len(s.probes))
	for pc := range s.probes {
		probes = append(probes, pc)
	}
	s.mu.Unlock()

	var wg sync.WaitGroup
	for _, r := range rooms {
		for _, pc := range r.close() {
			wg.Go(func() { pc.Close() })
		}
	}
	for _, pc := range probes {
		wg.Go(func() { pc.Close() })
	}
	wg.Wait()
	err := s.mux.Close()
	if cerr := s.conn.Close(); err == nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	return err
}

// errChecksBusy is returned by CheckAnswer beyond maxChecks concurrent checks.
var errChecksBusy = errors.New("too many connectivity checks; try again in a minute")

// CheckAnswer answers the offer of a browser's connectivity self-test (the
// /classroom/check page). The offer must contain a data channel; the
// PeerConnection echoes every message received on a channel labelled
// "check", and closes when that channel closes, when the connection fails,
// or after 30 seconds.
//
// The answer is not trickled: CheckAnswer waits for ICE gathering to
// complete (immediate with the UDP mux) or for ctx, and returns the answer
// with its candidates. At most 20 checks run at once; beyond that it
// returns an error saying so.
func (s *SFU) CheckAnswer(ctx context.Context, offerSDP string) (string, error) {
	parsed, err := unmarshalSDP(webrtc.SDPTypeOffer, offerSDP)
	if err != nil {
		return "", errors.New("the connectivity check sent an invalid offer")
	}
	hasData := false
	for _, m := range parsed.MediaDescriptions {
		if m.MediaName.Media == "application" {
			hasData = true
		}
	}
	if !hasData {
		return "", errors.New("the connectivity check offer has no data channel")
	}

	select {
	case s.checks <- struct{}{}:
	default:
		return "", errChecksBusy
	}
	release := sync.OnceFunc(func() { <-s.checks })

	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		release()
		return "", fmt.Errorf("connectivity check: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		release()
		pc.Close()
		return "", errors.New("the media server is shutting down")
	}
	s.probes[pc] = struct{}{}
	s.mu.Unlock()

	// end may run in a pion callback, so it closes in a goroutine. The
	// timer is not stopped: after end, its call is a no-op.
	end := sync.OnceFunc(func() {
		go func() {
			pc.Close()
			s.mu.Lock()
			delete(s.probes, pc)
			s.mu.Unlock()
			release()
		}()
	})
	time.AfterFunc(checkLifetime, end)

	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() != "check" {
			dc.Close()
			return
		}
		dc.OnMessage(func(m webrtc.DataChannelMessage) {
			var err error
			if m.IsString {
				err = dc.SendText(string(m.Data))
			} else {
				err = dc.Send(m.Data)
			}
			if err != nil {
				s.log.Debug("connectivity check echo", "err", err)
			}
		})
		dc.OnClose(end)
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			end()
		}
	})

	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offerSDP}); err != nil {
		end()
		return "", fmt.Errorf("the connectivity check offer was refused: %w", err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		end()
		return "", fmt.Errorf("connectivity check: %w", err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		end()
		return "", fmt.Errorf("connectivity check: %w", err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		end()
		return "", ctx.Err()
	}
	return pc.LocalDescription().SDP, nil
}

// NewRoom returns an empty room. send delivers a signalling message to one
// connection's WebSocket and events reports stream life the room service did
// not cause itself; see Room for when they are called. Neither may block
// (they should enqueue), and neither may call back into the Room
// synchronously. Either may be nil.
func (s *SFU) NewRoom(send func(conn string, sig Signal), events func(Event)) *Room {
	if send == nil {
		send = func(string, Signal) {}
	}
	if events == nil {
		events = func(Event) {}
	}
	r := &Room{
		sfu:     s,
		send:    send,
		events:  events,
		conns:   make(map[string]*conn),
		streams: make(map[string]*upStream),
	}
	s.mu.Lock()
	if s.closed {
		r.closed = true
	} else {
		s.rooms[r] = struct{}{}
	}
	s.mu.Unlock()
	return r
}

func (s *SFU) forget(r *Room) {
	s.mu.Lock()
	delete(s.rooms, r)
	s.mu.Unlock()
}

// streamID is the server id of the n-th stream of a room.
func streamID(n uint64) string { return "s" + strconv.FormatUint(n, 10) }
