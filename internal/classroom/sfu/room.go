package sfu

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
)

// Signal is a signalling message for one connection's WebSocket, in either
// direction (see "Media" in docs/classroom-protocol.md).
type Signal struct {
	// Kind is "offer", "answer", "ice" or "close".
	Kind string
	// Stream is the stream id as that connection knows it: the client's own
	// id for its publications, the server id ("s3") for forwarded streams.
	Stream string
	// UserID is the owner of a forwarded stream (server offers only).
	UserID string
	// Label is "camera", "mic" or "screen" (server offers only).
	Label string
	// SDP is the session description of an offer or answer.
	SDP string
	// Candidate is the ICE candidate of an "ice" message.
	Candidate *webrtc.ICECandidateInit
}

// Event tells the room service about stream life it did not cause itself.
type Event struct {
	// Kind is "published" when the first RTP packet of a stream arrived, or
	// "ended" when a publication ended without CloseStream, RemoveConn or
	// Close: its publisher's PeerConnection failed or closed, or the
	// publisher sent "close" for it through Signal; or "speaking" when
	// the sound of one of its audio tracks starts or stops being voice
	// (see speaking.go; Speaking tells which), at most about once a
	// second. A track that ends while speaking has a last "speaking"
	// event with Speaking false.
	Kind     string
	Stream   string // server stream id
	Conn     string // the publishing connection
	UserID   string
	Label    string
	Speaking bool
}

// StreamInfo describes a published stream.
type StreamInfo struct {
	ID       string // server stream id ("s3")
	Conn     string // publishing connection
	UserID   string
	Label    string // "camera", "mic", "screen" or "recording" (never forwarded)
	ClientID string // the publisher's own id for the stream
}

// Stats are a room's counters.
type Stats struct {
	Conns         int // connections added and not removed
	Streams       int // publications (whether or not media has arrived yet)
	Subscriptions int // forwarding PeerConnections (one per subscriber connection and stream)
	// PacketsIn and BytesIn count RTP packets (and their bytes, header
	// included) received from publishers since the room was made.
	PacketsIn, BytesIn uint64
	// PacketsOut and BytesOut count RTP packets (and bytes, before
	// encryption) written to subscribers since the room was made.
	PacketsOut, BytesOut uint64
	// WriteErrors counts packets that could not be written to a subscriber.
	WriteErrors uint64
	// KeyframeRequests counts the picture loss indications sent to publishers.
	KeyframeRequests uint64
}

// ErrUnknownStream is returned by Signal for a stream the connection does
// not have (any more). After a close crosses a client message, this is
// expected and can be ignored.
var ErrUnknownStream = errors.New("unknown stream")

// Room is the media of one class sitting: its connections, their
// publications and the forwarding between them. It is safe for concurrent
// use, and no method blocks on the network.
//
// Callbacks: send is called without the Room's locks held, from the calling
// goroutine (answers, offers, close signals caused by a method call) or from
// pion's goroutines (trickled ICE candidates, close signals after a failure,
// re-offers). A connection gets a description before any candidate for the
// same stream. events is called from pion's goroutines ("published", and
// "ended" after a failure) or from Signal ("ended" after a client close).
type Room struct {
	sfu    *SFU
	send   func(conn string, sig Signal)
	events func(Event)

	mu      sync.Mutex
	closed  bool
	conns   map[string]*conn
	streams map[string]*upStream
	seq     uint64
	tap     tapState // the in-process subscriber (SetTap)

	packetsIn, bytesIn, packetsOut, bytesOut, writeErrors, keyframes atomic.Uint64
}

// conn is one WebSocket connection of a user.
type conn struct {
	id, userID string
	receive    bool
	pubs       map[string]*upStream   // by client stream id
	subs       map[string]*downStream // by server stream id
	retries    map[string]int         // re-offers after failure, by server stream id
}

// outbox collects signals and events while the room is locked, to deliver
// them once it is unlocked.
type outbox struct {
	sigs   []outSignal
	events []Event
	open   []*gate // ICE gates to open once the signals are sent
}

type outSignal struct {
	conn string
	sig  Signal
}

func (o *outbox) signal(conn string, sig Signal) { o.sigs = append(o.sigs, outSignal{conn, sig}) }

// flush delivers everything collected; r.mu must not be held.
func (r *Room) flush(o *outbox) {
	for _, s := range o.sigs {
		r.send(s.conn, s.sig)
	}
	for _, g := range o.open {
		g.open()
	}
	for _, e := range o.events {
		r.events(e)
	}
}

// AddConn adds a connection of userID. With receive, the connection is
// offered every current and future stream of the other users (never those
// of its own user, from any device). Adding a connection id again is a
// no-op.
func (r *Room) AddConn(connID, userID string, receive bool) {
	var out outbox
	r.mu.Lock()
	if r.closed || r.conns[connID] != nil {
		r.mu.Unlock()
		return
	}
	c := &conn{
		id:      connID,
		userID:  userID,
		receive: receive,
		pubs:    make(map[string]*upStream),
		subs:    make(map[string]*downStream),
		retries: make(map[string]int),
	}
	r.conns[connID] = c
	if receive {
		for _, up := range r.sortedStreams() {
			if up.userID != userID && up.forwarded() {
				r.subscribeLocked(c, up, &out)
			}
		}
	}
	r.mu.Unlock()
	r.flush(&out)
}

// RemoveConn removes a connection: its publications end (their subscribers
// get "close"), and its subscriptions are closed. The connection itself gets
// no signal. Removing an unknown connection is a no-op.
func (r *Room) RemoveConn(connID string) {
	var out outbox
	r.mu.Lock()
	c := r.conns[connID]
	if c == nil {
		r.mu.Unlock()
		return
	}
	for _, up := range c.pubs {
		r.endLocked(up, false, &out)
	}
	for _, ds := range c.subs {
		r.unsubscribeLocked(c, ds)
	}
	delete(r.conns, connID)
	r.mu.Unlock()
	r.flush(&out)
}

// validClientID reports whether id is a valid client stream id: 1 to 64 of
// [A-Za-z0-9_-], and not of the server's form "s<digits>".
func validClientID(id string) error {
	if id == "" || len(id) > 64 {
		return errors.New("a stream id must have 1 to 64 characters")
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return errors.New("a stream id may contain only letters, digits, '-' and '_'")
		}
	}
	if len(id) > 1 && id[0] == 's' && strings.Trim(id[1:], "0123456789") == "" {
		return errors.New("stream ids of the form s<number> are reserved for the server; choose another id")
	}
	return nil
}

// checkOffer checks that an offer's media fit label.
func checkOffer(label, sdp string) error {
	parsed, err := unmarshalSDP(webrtc.SDPTypeOffer, sdp)
	if err != nil {
		return errors.New("the offer is not a valid session description")
	}
	video, audio := 0, 0
	for _, m := range parsed.MediaDescriptions {
		if m.MediaName.Port.Value == 0 {
			continue // a rejected or stopped m-line
		}
		switch m.MediaName.Media {
		case "video":
			video++
		case "audio":
			audio++
		default:
			return fmt.Errorf("a media offer may contain only audio and video, not %q", m.MediaName.Media)
		}
		for _, dir := range []string{"recvonly", "inactive"} {
			if _, ok := m.Attribute(dir); ok {
				return fmt.Errorf("every track of a published stream must be sending (one is %s)", dir)
			}
		}
	}
	switch label {
	case "camera":
		if video != 1 || audio != 0 {
			return fmt.Errorf("a camera stream must have exactly one video track and no audio (the offer has %d video, %d audio)", video, audio)
		}
	case "mic":
		if audio != 1 || video != 0 {
			return fmt.Errorf("a mic stream must have exactly one audio track and no video (the offer has %d video, %d audio)", video, audio)
		}
	case "screen", labelRecording:
		if video != 1 || audio > 1 {
			return fmt.Errorf("a %s stream must have one video track and at most one audio track (the offer has %d video, %d audio)", label, video, audio)
		}
	default:
		return fmt.Errorf("unknown stream label %q (use camera, mic, screen or recording)", label)
	}
	return nil
}

// Publish accepts a client's offer to publish a stream: it checks the
// offer against label (camera: exactly one video track; mic: exactly one
// audio track; screen: one video track and at most one audio track), sends
// the answer with send(conn, Signal{Kind: "answer", Stream: clientStream}),
// and offers the stream to every receiving connection of other users. It
// returns the server stream id. Errors are plain sentences for the client.
func (r *Room) Publish(connID, clientStream, label, sdp string) (string, error) {
	if err := validClientID(clientStream); err != nil {
		return "", err
	}
	if err := checkOffer(label, sdp); err != nil {
		return "", err
	}

	var out outbox
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return "", errors.New("the classroom media server has closed")
	}
	c := r.conns[connID]
	if c == nil {
		r.mu.Unlock()
		return "", errors.New("this connection has not joined the media room")
	}
	if c.pubs[clientStream] != nil {
		r.mu.Unlock()
		return "", fmt.Errorf("stream id %q is already in use on this connection; choose another", clientStream)
	}
	up, answer, err := r.newUpStream(c, clientStream, label, sdp)
	if err != nil {
		r.mu.Unlock()
		return "", err
	}
	r.streams[up.id] = up
	c.pubs[clientStream] = up
	out.signal(connID, Signal{Kind: "answer", Stream: clientStream, SDP: answer})
	out.open = append(out.open, up.gate)
	for _, other := range r.sortedConns() {
		if other.receive && other.userID != c.userID && up.forwarded() {
			r.subscribeLocked(other, up, &out)
		}
	}
	r.mu.Unlock()
	r.flush(&out)
	return up.id, nil
}

// Signal handles a signalling message from a client: "answer" to a server
// offer, "ice" for either direction, and "close" of the client's own
// publication (which then ends; its subscribers get "close" and Event
// "ended" follows) or of a subscription. It returns ErrUnknownStream (maybe
// wrapped) when the stream is not known on this connection.
func (r *Room) Signal(connID string, sig Signal) error {
	var out outbox
	r.mu.Lock()
	err := r.signalLocked(connID, sig, &out)
	r.mu.Unlock()
	r.flush(&out)
	return err
}

func (r *Room) signalLocked(connID string, sig Signal, out *outbox) error {
	c := r.conns[connID]
	if c == nil {
		return errors.New("this connection has not joined the media room")
	}
	up, ds := c.pubs[sig.Stream], c.subs[sig.Stream]
	if up == nil && ds == nil {
		return fmt.Errorf("%w %q", ErrUnknownStream, sig.Stream)
	}
	switch sig.Kind {
	case "answer":
		if ds == nil {
			return fmt.Errorf("stream %q is your own publication; only server offers take an answer", sig.Stream)
		}
		return ds.answer(sig.SDP)
	case "ice":
		if sig.Candidate == nil {
			return errors.New("an ice message needs a candidate")
		}
		if up != nil {
			if err := up.pc.AddICECandidate(*sig.Candidate); err != nil {
				return fmt.Errorf("invalid ICE candidate: %w", err)
			}
			return nil
		}
		return ds.candidate(*sig.Candidate)
	case "close":
		if up != nil {
			r.endLocked(up, false, out)
			out.events = append(out.events, up.event("ended"))
			return nil
		}
		r.unsubscribeLocked(c, ds)
		return nil
	case "offer":
		return errors.New("publish a stream with an offer that has a label")
	default:
		return fmt.Errorf("unknown media message kind %q", sig.Kind)
	}
}

// CloseStream ends a publication from the server side (the teacher muted
// someone): the publisher gets "close" with its own stream id and every
// subscriber gets "close". No Event follows. Unknown ids are ignored.
func (r *Room) CloseStream(streamID string) {
	var out outbox
	r.mu.Lock()
	if up := r.streams[streamID]; up != nil {
		r.endLocked(up, true, &out)
	}
	r.mu.Unlock()
	r.flush(&out)
}

// Streams lists the room's publications in the order they were published.
func (r *Room) Streams() []StreamInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	var list []StreamInfo
	for _, up := range r.sortedStreams() {
		list = append(list, StreamInfo{ID: up.id, Conn: up.conn, UserID: up.userID, Label: up.label, ClientID: up.clientID})
	}
	return list
}

// Stats returns the room's counters.
func (r *Room) Stats() Stats {
	r.mu.Lock()
	st := Stats{Conns: len(r.conns), Streams: len(r.streams)}
	for _, c := range r.conns {
		st.Subscriptions += len(c.subs)
	}
	r.mu.Unlock()
	st.PacketsIn = r.packetsIn.Load()
	st.BytesIn = r.bytesIn.Load()
	st.PacketsOut = r.packetsOut.Load()
	st.BytesOut = r.bytesOut.Load()
	st.WriteErrors = r.writeErrors.Load()
	st.KeyframeRequests = r.keyframes.Load()
	return st
}

// Close closes every PeerConnection of the room without sending signals.
// Later calls on the room do nothing (Publish fails).
func (r *Room) Close() {
	for _, pc := range r.close() {
		go pc.Close()
	}
	r.sfu.forget(r)
}

// close marks the room closed and returns its PeerConnections for the
// caller to close.
func (r *Room) close() []*webrtc.PeerConnection {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var pcs []*webrtc.PeerConnection
	for _, c := range r.conns {
		for _, up := range c.pubs {
			up.shutdown()
			pcs = append(pcs, up.pc)
		}
		for _, ds := range c.subs {
			ds.shutdown()
			pcs = append(pcs, ds.pc)
		}
	}
	clear(r.conns)
	clear(r.streams)
	return pcs
}

// sortedStreams returns the streams in publication order; r.mu is held.
func (r *Room) sortedStreams() []*upStream {
	list := make([]*upStream, 0, len(r.streams))
	for _, up := range r.streams {
		list = append(list, up)
	}
	slices.SortFunc(list, func(a, b *upStream) int { return int(a.seq) - int(b.seq) })
	return list
}

// sortedConns returns the connections sorted by id; r.mu is held.
func (r *Room) sortedConns() []*conn {
	list := make([]*conn, 0, len(r.conns))
	for _, c := range r.conns {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b *conn) int { return strings.Compare(a.id, b.id) })
	return list
}

// endLocked ends a publication: every subscriber gets "close", and so does
// the publisher if notify. r.mu is held.
func (r *Room) endLocked(up *upStream, notify bool, out *outbox) {
	if r.streams[up.id] != up {
		return
	}
	delete(r.streams, up.id)
	if c := r.conns[up.conn]; c != nil {
		delete(c.pubs, up.clientID)
	}
	for _, c := range r.sortedConns() {
		delete(c.retries, up.id)
		if ds := c.subs[up.id]; ds != nil {
			r.unsubscribeLocked(c, ds)
			out.signal(c.id, Signal{Kind: "close", Stream: up.id})
		}
	}
	if notify {
		out.signal(up.conn, Signal{Kind: "close", Stream: up.clientID})
	}
	up.shutdown()
	go up.pc.Close()
}

// unsubscribeLocked closes one forwarding PeerConnection without a signal.
// r.mu is held.
func (r *Room) unsubscribeLocked(c *conn, ds *downStream) {
	if c.subs[ds.up.id] != ds {
		return
	}
	delete(c.subs, ds.up.id)
	ds.shutdown()
	go ds.pc.Close()
}

// subscribeLocked offers up to c. r.mu is held.
func (r *Room) subscribeLocked(c *conn, up *upStream, out *outbox) {
	if c.subs[up.id] != nil {
		return
	}
	ds, offer, err := r.newDownStream(c, up)
	if err != nil {
		r.sfu.log.Warn("cannot forward stream", "stream", up.id, "conn", c.id, "err", err)
		return
	}
	c.subs[up.id] = ds
	out.signal(c.id, Signal{Kind: "offer", Stream: up.id, UserID: up.userID, Label: up.label, SDP: offer})
	out.open = append(out.open, ds.gate)
}

// publisherGone handles a publisher PeerConnection that failed or closed on
// its own.
func (r *Room) publisherGone(up *upStream) {
	var out outbox
	r.mu.Lock()
	if r.streams[up.id] == up {
		r.endLocked(up, true, &out)
		out.events = append(out.events, up.event("ended"))
	}
	r.mu.Unlock()
	r.flush(&out)
}

// Re-offers after a forwarding PeerConnection fails.
const (
	maxRetries   = 3
	retryBackoff = 2 * time.Second
)

// subscriberGone handles a forwarding PeerConnection that failed or closed
// on its own: the subscriber gets "close", and a new offer follows after
// retryBackoff, at most maxRetries times per stream and connection.
func (r *Room) subscriberGone(ds *downStream) {
	var out outbox
	r.mu.Lock()
	c := r.conns[ds.conn]
	if c != nil && c.subs[ds.up.id] == ds {
		r.unsubscribeLocked(c, ds)
		out.signal(c.id, Signal{Kind: "close", Stream: ds.up.id})
		if c.retries[ds.up.id] < maxRetries && r.streams[ds.up.id] == ds.up {
			c.retries[ds.up.id]++
			time.AfterFunc(retryBackoff, func() { r.resubscribe(c, ds.up) })
		}
	}
	r.mu.Unlock()
	r.flush(&out)
}

func (r *Room) resubscribe(c *conn, up *upStream) {
	var out outbox
	r.mu.Lock()
	if !r.closed && r.conns[c.id] == c && r.streams[up.id] == up {
		r.subscribeLocked(c, up, &out)
	}
	r.mu.Unlock()
	r.flush(&out)
}
