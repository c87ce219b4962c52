package loadtest

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/lectern-lms/lectern/internal/classroom/sfu/pionlog"
)

// Audio: Opus, 20 ms frames of 80 bytes (32 kbit/s).
const (
	audioFrame = 20 * time.Millisecond
	audioBytes = 80
)

// keyframeWeight is the size of a keyframe in delta frames: a camera's
// keyframe is several times larger than the frames that follow it.
const keyframeWeight = 3

// newAPI returns the pion API of the synthetic participants: VP8 and
// Opus, pion's default interceptors (as a browser has: NACK, receiver and
// sender reports, transport-wide congestion control feedback), and ICE
// over loopback UDP only (no mDNS, no other interface).
//
// sent counts the RTP packets the API's PeerConnections send.
func newAPI(o Options, sent *sentCounter) (*webrtc.API, error) {
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		return nil, err
	}
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(me, ir); err != nil {
		return nil, err
	}
	ir.Add(sent)
	var se webrtc.SettingEngine
	se.LoggerFactory = pionlog.Factory(slog.New(demote{o.Logger.Handler()}))
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.DisableActiveTCP(true)
	return webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(se)), nil
}

// demote passes pion's warnings on as debug messages: in a load test pion
// warns about ordinary events (connectivity checks before the remote
// candidates arrive, packets in flight when a PeerConnection closes), and
// the run's own warnings would drown in them. Errors stay errors.
type demote struct{ slog.Handler }

func (d demote) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, lower(l))
}

func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return d.Handler.Handle(ctx, r)
}

func (d demote) WithAttrs(attrs []slog.Attr) slog.Handler { return demote{d.Handler.WithAttrs(attrs)} }
func (d demote) WithGroup(name string) slog.Handler       { return demote{d.Handler.WithGroup(name)} }

func lower(l slog.Level) slog.Level {
	if l == slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

// sentCounter is an interceptor that counts the RTP packets sent, by
// kind, and keeps the last sequence number of each (the load test has one
// stream of each kind). Registered after pion's own, it sees what the application writes
// and not the NACK responder's retransmissions. One instance serves every
// PeerConnection.
type sentCounter struct {
	interceptor.NoOp
	video, audio sent
}

// sent counts one kind's packets and keeps the last sequence number.
type sent struct {
	packets atomic.Uint64
	seq     atomic.Uint32
}

func (c *sentCounter) NewInterceptor(string) (interceptor.Interceptor, error) { return c, nil }

func (c *sentCounter) BindLocalStream(info *interceptor.StreamInfo, w interceptor.RTPWriter) interceptor.RTPWriter {
	n := &c.video
	if strings.HasPrefix(strings.ToLower(info.MimeType), "audio/") {
		n = &c.audio
	}
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		n.packets.Add(1)
		n.seq.Store(uint32(h.SequenceNumber))
		return w.Write(h, payload, a)
	})
}

// source is a synthetic media source feeding one local track.
type source struct {
	track    *webrtc.TrackLocalStaticSample
	keyframe atomic.Bool // the server asked for a keyframe
}

// video sends fps frames a second totalling about kbps. The first frame of
// every second is a keyframe, and so is the next frame after a keyframe
// request; a keyframe weighs keyframeWeight delta frames. Forwarding does
// not decode, so only the frame headers are real VP8: the rest is noise.
func (s *source) video(ctx context.Context, kbps, fps int) {
	perSecond := kbps * 1000 / 8
	delta := max(perSecond/(fps-1+keyframeWeight), 16)
	key := vp8Frame(delta*keyframeWeight, true)
	inter := vp8Frame(delta, false)
	interval := time.Second / time.Duration(fps)
	pace(ctx, interval, func(n int) {
		frame := inter
		if s.keyframe.Swap(false) || n%fps == 0 {
			frame = key
		}
		// An error means the track is not bound (not connected yet, or
		// closed): the frame is dropped, as a camera's would be.
		_ = s.track.WriteSample(media.Sample{Data: frame, Duration: interval})
	})
}

// audio sends an Opus frame every 20 ms.
func (s *source) audio(ctx context.Context) {
	frame := make([]byte, audioBytes)
	fillNoise(frame)
	// TOC byte: configuration 31 (CELT, fullband, 20 ms), mono, one frame.
	frame[0] = 31 << 3
	pace(ctx, audioFrame, func(int) {
		_ = s.track.WriteSample(media.Sample{Data: frame, Duration: audioFrame})
	})
}

// maxBehind is how far a source catches up after being scheduled late;
// frames older than that are skipped, as a starved encoder would.
const maxBehind = 200 * time.Millisecond

// pace calls send(0), send(1), ... once per interval of wall-clock time
// until ctx ends. A goroutine scheduled late (the clients share the
// machine with the server) sends the frames it owes at once, so that the
// offered load stays at its nominal rate, up to maxBehind.
func pace(ctx context.Context, interval time.Duration, send func(n int)) {
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	catchUp := max(1, int(maxBehind/interval))
	for n := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		due := int(time.Since(start) / interval)
		n = max(n, due-catchUp)
		for ; n < due; n++ {
			send(n)
		}
	}
}

// vp8Frame returns a synthetic VP8 frame of n bytes whose header marks it a
// keyframe (with a 640x480 picture) or an interframe, shown, with the
// first partition spanning the rest of the frame.
func vp8Frame(n int, keyframe bool) []byte {
	b := make([]byte, n)
	fillNoise(b)
	header := 3
	if keyframe {
		header = 10
	}
	first := min(n-header, 1<<19-1) // 19 bits
	tag := uint32(first)<<5 | 1<<4  // version 0, show_frame 1
	if !keyframe {
		tag |= 1 // bit 0 clear marks a keyframe
	}
	b[0], b[1], b[2] = byte(tag), byte(tag>>8), byte(tag>>16)
	if keyframe {
		b[3], b[4], b[5] = 0x9d, 0x01, 0x2a // start code
		b[6], b[7] = 640&0xff, 640>>8       // width, no scaling
		b[8], b[9] = 480&0xff, 480>>8       // height, no scaling
	}
	return b
}

// fillNoise fills b with pseudo-random bytes (encoded media looks random).
func fillNoise(b []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}
