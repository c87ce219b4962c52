package sfu

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// Tap receives every stream of a room, present and future, as the SFU
// receives it from the publishers. It is an in-process subscriber (the
// recorder): it needs no PeerConnection of its own, so it costs no
// encryption and no copy of the media.
//
// A track is named by its stream's server id and a track id, the track's
// kind and its position in the publisher's offer ("video0", "audio1").
//
// The methods are called from the SFU's forwarding and RTCP goroutines,
// several at once (a few per track), and must not block: a tap should
// enqueue and return. They may call Room.RequestKeyframe but nothing else
// of the Room.
//
// For one tap and track, TrackStarted comes first and TrackEnded last, and
// SenderReport only comes between them. RTP comes after TrackStarted, from
// one goroutine per track, so in the order received. A tap that has been
// replaced or removed (SetTap) has had TrackEnded for every track, but may
// still get RTP calls that were already under way; it should ignore RTP for
// tracks it does not know.
type Tap interface {
	// TrackStarted tells that the first packet of a track arrived (or, on
	// SetTap, that the track is running). codec is the negotiated codec
	// (VP8 or Opus).
	TrackStarted(s StreamInfo, trackID string, codec webrtc.RTPCodecParameters)
	// RTP passes a packet as received from the publisher, header
	// extensions included. The tap may keep p: the SFU does not reuse or
	// change it after the call. The tap must not change it either, since
	// the subscribers' forwarding reads it too.
	RTP(streamID, trackID string, p *rtp.Packet)
	// SenderReport passes an RTCP sender report of the track's publisher
	// (its NTP time and RTP timestamp pair), only those for the track's
	// own SSRC.
	SenderReport(streamID, trackID string, sr rtcp.SenderReport)
	// TrackEnded tells that a track stopped: its publication ended, the
	// room closed, or the tap was replaced.
	TrackEnded(streamID, trackID string)
}

// tapState is a Room's tap and the tracks it has been told about.
type tapState struct {
	fast atomic.Pointer[tapBox] // the current tap, for the packet path

	mu      sync.Mutex // serialises the calls below, so that their order holds
	current Tap
	tracks  map[*upTrack]*tappedTrack // tracks whose forwarding has started
}

type tapBox struct{ tap Tap }

type tappedTrack struct {
	info  StreamInfo
	seq   uint64 // the stream's publication order
	index int    // the track's position in the offer
	id    string
	codec webrtc.RTPCodecParameters
}

// SetTap makes t receive every stream of the room. It gets TrackStarted at
// once for every track already running, then everything else as it
// happens. A previous tap gets TrackEnded for every running track. A nil t
// removes the tap.
func (r *Room) SetTap(t Tap) {
	s := &r.tap
	s.mu.Lock()
	defer s.mu.Unlock()
	running := s.sorted()
	if old := s.current; old != nil {
		for _, tt := range running {
			old.TrackEnded(tt.info.ID, tt.id)
		}
	}
	s.current = t
	if t == nil {
		s.fast.Store(nil)
		return
	}
	for _, tt := range running {
		t.TrackStarted(tt.info, tt.id, tt.codec)
	}
	// Only now do packets go to t: after its TrackStarted calls.
	s.fast.Store(&tapBox{t})
}

// RequestKeyframe asks the publisher of a stream for a keyframe on its
// video track, through the same throttle as the subscribers' requests (at
// most one picture loss indication per keyframeInterval; a request inside
// it is sent at its end). Unknown streams and audio-only streams are
// ignored.
func (r *Room) RequestKeyframe(streamID string) {
	r.mu.Lock()
	up := r.streams[streamID]
	r.mu.Unlock()
	if up == nil {
		return
	}
	for _, t := range up.tracks {
		t.requestKeyframe()
	}
}

// sorted returns the running tracks in publication order; s.mu is held.
func (s *tapState) sorted() []*tappedTrack {
	list := make([]*tappedTrack, 0, len(s.tracks))
	for _, tt := range s.tracks {
		list = append(list, tt)
	}
	slices.SortFunc(list, func(a, b *tappedTrack) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.index, b.index))
	})
	return list
}

// tapStart registers a track whose forwarding starts, tells the tap, and
// returns the track's id.
func (r *Room) tapStart(t *upTrack, remote *webrtc.TrackRemote) string {
	up := t.up
	index := slices.Index(up.tracks, t)
	id := t.kind.String() + strconv.Itoa(index)
	tt := &tappedTrack{
		info:  StreamInfo{ID: up.id, Conn: up.conn, UserID: up.userID, Label: up.label, ClientID: up.clientID},
		seq:   up.seq,
		index: index,
		id:    id,
		codec: remote.Codec(),
	}
	s := &r.tap
	s.mu.Lock()
	if s.tracks == nil {
		s.tracks = make(map[*upTrack]*tappedTrack)
	}
	s.tracks[t] = tt
	if s.current != nil {
		s.current.TrackStarted(tt.info, id, tt.codec)
	}
	s.mu.Unlock()
	return id
}

// tapEnd forgets a track whose forwarding stopped and tells the tap.
func (r *Room) tapEnd(t *upTrack) {
	s := &r.tap
	s.mu.Lock()
	if tt := s.tracks[t]; tt != nil {
		delete(s.tracks, t)
		if s.current != nil {
			s.current.TrackEnded(tt.info.ID, tt.id)
		}
	}
	s.mu.Unlock()
}

// tapRTP passes a received packet to the tap, if any.
func (r *Room) tapRTP(streamID, trackID string, p *rtp.Packet) {
	if b := r.tap.fast.Load(); b != nil {
		b.tap.RTP(streamID, trackID, p)
	}
}

// tapRTCP passes the sender reports for a track's SSRC to the tap, if any.
func (r *Room) tapRTCP(t *upTrack, pkts []rtcp.Packet) {
	ssrc := t.ssrc.Load()
	s := &r.tap
	for _, p := range pkts {
		sr, ok := p.(*rtcp.SenderReport)
		if !ok || sr.SSRC != ssrc {
			continue
		}
		s.mu.Lock()
		if tt := s.tracks[t]; tt != nil && s.current != nil {
			s.current.SenderReport(tt.info.ID, tt.id, *sr)
		}
		s.mu.Unlock()
	}
}
