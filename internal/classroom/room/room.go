package room

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	hook "github.com/lectern-lms/lectern/internal/event"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/quizsvc"
)

// Limits of a room.
const (
	// ChatHistory is how many chat messages a room keeps for late joiners.
	ChatHistory = 500
	// MaxChatRunes is the longest chat message.
	MaxChatRunes = 2000
	// ChatBurst messages per ChatWindow per user.
	ChatBurst  = 5
	ChatWindow = 5 * time.Second
	// ExtendStep is how much one extension adds; MaxExtension is the most
	// a sitting can be extended (launch links stay valid that long after
	// the scheduled end).
	ExtendStep   = 15 * time.Minute
	MaxExtension = 60 * time.Minute
	// EndWarning is how long before the end everyone is warned.
	EndWarning = 5 * time.Minute
	// eventRing is how many recent events are kept for resumes.
	eventRing = 1024
	// outBuffer is how many messages may wait for a slow connection
	// before it is dropped.
	outBuffer = 1024
)

// Room is one sitting's live room. All its fields belong to its
// goroutine.
type Room struct {
	hub   *Hub
	key   Key
	class lms.LiveClass
	plan  lms.Plan
	q     *mailbox
	done  chan struct{}

	loaded   bool
	stopped  bool
	sitting  lms.Sitting
	occ      lms.Occurrence
	endsAt   time.Time
	warnedAt time.Time // the endsAt a warning was sent for
	removed  map[string]bool

	users   map[string]*user
	order   []string // user ids in order of arrival
	conns   map[string]*Conn
	past    map[string]string // closed connection id -> user id, for resumes
	hands   []string
	chat    []ChatMessage
	streams map[string]*stream // by stream id
	seq     int64
	ring    []event
	media   Media
	emptyAt time.Time

	board        *board
	presentation *Presentation
	files        []lms.RoomFile
	// drawAll lets every student draw; filesAll share files (the
	// teacher's room-wide switches, below per-user overrides).
	drawAll, filesAll bool

	// quiz is the in-class quiz launched in this sitting; quizAgg is set
	// once it is closed.
	quiz    *quizsvc.LiveQuiz
	quizAgg *quizsvc.Aggregate
	// quizDirty: answers came in since the teachers' last tally.
	quizDirty bool
	quizAt    time.Time

	recorder    Recorder
	recording   bool
	autoStarted bool

	// saved is what the store kept of users not yet back in this room
	// (restored as they join: hands, permissions).
	saved map[string]lms.RoomUser
}

type user struct {
	id, name string
	teacher  bool
	conns    map[string]*Conn
	// Per-user permission overrides set by the teacher; nil follows the
	// class settings.
	media, screen, draw, files *bool
	hand                       bool
	handAt                     time.Time // when the hand went up
	quality                    string
	chatTimes                  []time.Time
	awarded                    bool
}

type stream struct {
	id, conn, user, label, clientID string
	speaking                        bool // its sound is voice (SpeakingMedia)
}

// event is a sent change, kept for resumes. to is nil for everyone.
type event struct {
	seq  int64
	to   []string
	data []byte
}

type joinResult struct {
	conn *Conn
	err  error
}

func newRoom(h *Hub, k Key, c lms.LiveClass, p lms.Plan) *Room {
	return &Room{hub: h, key: k, class: c, plan: p, q: newMailbox(), done: make(chan struct{}),
		removed: map[string]bool{}, users: map[string]*user{}, conns: map[string]*Conn{},
		past: map[string]string{}, streams: map[string]*stream{}}
}

func (r *Room) run() {
	defer close(r.done)
	for {
		<-r.q.wake
		for _, fn := range r.q.take() {
			fn()
		}
		if r.stopped {
			// Work posted before the hub forgot the room still runs
			// (a join then gets a retryable refusal).
			for _, fn := range r.q.take() {
				fn()
			}
			return
		}
	}
}

// do runs fn on the room's goroutine and waits for it.
func (r *Room) do(fn func()) bool {
	done := make(chan struct{})
	if !r.q.post(func() { fn(); close(done) }) {
		return false
	}
	<-done
	return true
}

func (r *Room) now() time.Time { return r.hub.now().UTC() }

// load reads what the store keeps of the sitting, once.
func (r *Room) load(ctx context.Context) error {
	if r.loaded {
		return nil
	}
	st := r.hub.Store
	var err error
	if r.sitting, err = st.Sitting(ctx, r.key.Domain, r.key.Class, r.key.Sitting); err != nil {
		return err
	}
	removed, err := st.RoomRemovals(ctx, r.key.Domain, r.key.Class, r.key.Sitting)
	if err != nil {
		return err
	}
	for _, u := range removed {
		r.removed[u] = true
	}
	chat, err := st.RoomChat(ctx, r.key.Domain, r.key.Class, r.key.Sitting, ChatHistory)
	if err != nil {
		return err
	}
	for _, m := range chat {
		r.chat = append(r.chat, wireChat(m))
	}
	for _, o := range r.class.Occurrences {
		if o.Seq == r.key.Sitting {
			r.occ = o
		}
	}
	if r.sitting.OpenedAt.IsZero() {
		r.sitting.OpenedAt = r.now().Truncate(time.Second)
		if err := st.SaveFencedSitting(ctx, r.key.Domain, r.fence(), r.sitting, hook.ClassStartedEvent(r.sitting)); err != nil {
			return err
		}
	}
	if err := r.loadUsers(ctx); err != nil {
		return err
	}
	r.endsAt = r.computeEnd()
	if err := r.loadBoard(ctx); err != nil {
		return err
	}
	if err := r.loadFiles(ctx); err != nil {
		return err
	}
	if r.hub.Media != nil && r.class.IsBoard == 0 {
		r.media = r.hub.Media(r.mediaSend, r.mediaEnded)
		if sm, ok := r.media.(SpeakingMedia); ok {
			sm.OnSpeaking(r.mediaSpeaking)
		}
	}
	r.loaded = true
	return nil
}

// computeEnd is when the room closes: the sitting's scheduled end plus
// the teacher's extensions, and, on a plan that limits sessions, no later
// than that long after the sitting started (or the room opened, if
// later).
func (r *Room) computeEnd() time.Time {
	end := r.occ.End.Add(time.Duration(r.sitting.ExtendedMinutes) * time.Minute)
	if r.plan.SessionMinutes > 0 {
		start := r.occ.Start
		if r.sitting.OpenedAt.After(start) {
			start = r.sitting.OpenedAt
		}
		if limit := start.Add(time.Duration(r.plan.SessionMinutes) * time.Minute); limit.Before(end) {
			end = limit
		}
	}
	return end
}

func (r *Room) join(ctx context.Context, e Entry) joinResult {
	if r.stopped {
		return joinResult{err: NewFail(FailEnded, "The room was just closing. Try again in a moment.")}
	}
	if err := r.load(ctx); err != nil {
		r.hub.logger().Error("open room", "class", r.key.Class, "sitting", r.key.Sitting, "err", err)
		return joinResult{err: NewFail(FailInvalid, "The class could not be opened. Try again in a moment.")}
	}
	l := e.Launch
	now := r.now()
	switch {
	case !r.sitting.EndedAt.IsZero() || !now.Before(r.endsAt):
		return joinResult{err: NewFail(FailEnded, "This class has ended.")}
	case r.removed[l.UserID]:
		return joinResult{err: NewFail(FailRemoved, "The teacher removed you from this class.")}
	}
	u := r.users[l.UserID]
	if u == nil || len(u.conns) == 0 {
		if code := r.seatCheck(l.Teacher); code != "" {
			return joinResult{err: NewFail(FailFull, "This class is full.")}
		}
	}
	if u == nil {
		u = &user{id: l.UserID, conns: map[string]*Conn{}, quality: "unknown"}
		r.users[l.UserID] = u
		r.order = append(r.order, l.UserID)
		r.restoreUser(u)
	}
	u.name, u.teacher = l.UserName, u.teacher || l.Teacher

	// A resume keeps the connection id and replays what was missed, when
	// the connection was this user's and the events are still kept.
	id, resumed := newConnID(), false
	var replay []event
	if res := e.Resume; res != nil && res.Conn != "" {
		owner, known := r.past[res.Conn]
		if old := r.conns[res.Conn]; old != nil {
			owner, known = old.user, true
		}
		if known && owner == l.UserID {
			if evs, ok := r.since(res.Seq, l.UserID); ok {
				id, resumed, replay = res.Conn, true, evs
			}
			if old := r.conns[res.Conn]; old != nil {
				r.sendTo(old, noticeMsg{Type: "notice", Key: "session-replaced"})
				r.detach(old, "replaced")
			}
			delete(r.past, res.Conn)
		}
	}

	c := newConn(r, id, u.id)
	c.extend = l.Extend
	first := len(u.conns) == 0
	u.conns[c.id] = c
	r.conns[c.id] = c
	r.record(c, lms.AttendanceJoin, now)
	if !u.awarded {
		u.awarded = true
		r.award(u)
	}
	if r.media != nil {
		r.media.AddConn(c.id, u.id, true)
	}

	w := Welcome{Type: "welcome", Protocol: Protocol, Conn: c.id, Resumed: resumed,
		You:         You{UserID: u.id, Name: u.name, Role: role(u)},
		Permissions: r.permissions(u), Settings: r.settings(), Lang: r.lang(),
		Class:  ClassInfo{ID: r.class.ID, Title: r.class.Title, Sitting: r.key.Sitting, StartsAt: r.occ.Start, EndsAt: r.occ.End},
		EndsAt: r.endsAt, Now: now}
	if r.hub.ICE != nil {
		w.ICE = r.hub.ICE(c.id)
	}
	if w.ICE.ICEServers == nil {
		w.ICE.ICEServers = []ICEServer{}
	}
	// The join is announced first, so the welcome's seq covers it. A
	// resumed client gets it after the events it missed (which may hold
	// its own leave).
	if first {
		p := r.participant(u)
		r.broadcast(eventMsg{Kind: "join", Participant: &p}, nil, c)
	} else {
		r.changed(u, c)
	}
	if resumed {
		replay = append(replay, r.ring[len(r.ring)-1])
	}
	w.Seq = r.seq
	if !resumed {
		s := r.snapshot(u)
		w.Snapshot = &s
	}
	r.sendTo(c, w)
	for _, ev := range replay {
		c.push(ev.data)
	}
	r.resumeRecording()
	return joinResult{conn: c}
}

// seatCheck returns "full" when a new user of this role may not enter:
// students are limited by the class's seats and the plan's connections;
// the teacher always enters.
func (r *Room) seatCheck(teacher bool) string {
	if teacher {
		return ""
	}
	students, present := 0, 0
	for _, u := range r.users {
		if len(u.conns) == 0 {
			continue
		}
		present++
		if !u.teacher {
			students++
		}
	}
	if r.class.SeatAttendees > 0 && students >= r.class.SeatAttendees {
		return FailFull
	}
	if r.plan.Connections > 0 && present >= r.plan.Connections {
		return FailFull
	}
	return ""
}

// since returns the events after seq that user may see, or false when
// they are no longer all kept.
func (r *Room) since(seq int64, userID string) ([]event, bool) {
	if seq > r.seq || seq < 0 {
		return nil, false
	}
	if seq == r.seq {
		return nil, true
	}
	if len(r.ring) == 0 || r.ring[0].seq > seq+1 {
		return nil, false
	}
	var out []event
	for _, ev := range r.ring {
		if ev.seq > seq && (ev.to == nil || slices.Contains(ev.to, userID)) {
			out = append(out, ev)
		}
	}
	return out, true
}

// record writes an attendance event; a failure is logged, not fatal.
func (r *Room) record(c *Conn, kind string, at time.Time) {
	u := r.users[c.user]
	ev := lms.AttendanceEvent{ClassID: r.key.Class, OccurrenceSeq: r.key.Sitting, UserRef: u.id,
		UserName: u.name, IsTeacher: u.teacher, Kind: kind, At: at.Truncate(time.Second)}
	r.logWrite("record attendance", r.hub.Store.AddFencedAttendance(context.Background(), r.key.Domain, r.fence(), ev))
}

// award gives an LMS user (a classroom user id that is an LMS user id of
// the domain) the class_attended points of the sitting, once.
func (r *Room) award(u *user) {
	id, err := strconv.ParseInt(u.id, 10, 64)
	if err != nil || id <= 0 {
		return
	}
	if _, err := r.hub.Store.AwardClassAttended(context.Background(), r.key.Domain, id, r.key.Class, r.key.Sitting); err != nil {
		r.hub.logger().Error("award class_attended", "class", r.key.Class, "err", err)
	}
}

// leave is a connection going away (its socket closed).
func (r *Room) leave(c *Conn) {
	if r.conns[c.id] == c {
		r.detach(c, "")
	}
}

// detach removes a connection from the room and closes it with reason.
func (r *Room) detach(c *Conn, reason string) {
	u := r.users[c.user]
	delete(r.conns, c.id)
	delete(u.conns, c.id)
	r.past[c.id] = c.user
	r.record(c, lms.AttendanceLeave, r.now())
	if r.media != nil {
		r.media.RemoveConn(c.id)
	}
	for id, s := range r.streams {
		if s.conn == c.id {
			delete(r.streams, id)
			r.broadcast(eventMsg{Kind: "unstream", ID: id}, nil, nil)
		}
	}
	if len(u.conns) == 0 {
		if u.hand {
			u.hand = false
			r.hands = slices.DeleteFunc(r.hands, func(id string) bool { return id == u.id })
			if reason != "restart" {
				// A room closing on this node (to open on another, or
				// after a restart) keeps the hand up for its next owner.
				r.saveUser(u)
			}
			r.broadcast(eventMsg{Kind: "hands", Hands: r.handList()}, nil, nil)
		}
		r.broadcast(eventMsg{Kind: "leave", UserID: u.id}, nil, nil)
	} else {
		r.changed(u, nil)
	}
	if len(r.conns) == 0 {
		r.emptyAt = r.now()
	}
	c.close(reason)
}

// checkTime warns before the end, closes the room at the end, and stops
// an empty room after the idle timeout.
func (r *Room) checkTime() {
	if r.stopped || !r.loaded {
		return
	}
	now := r.now()
	if !now.Before(r.endsAt) {
		r.end("time")
		return
	}
	r.checkQuiz(now, false)
	if len(r.conns) > 0 {
		r.autoRecord(now)
	}
	if r.endsAt.Sub(now) <= EndWarning && !r.warnedAt.Equal(r.endsAt) {
		r.warnedAt = r.endsAt
		at := r.endsAt
		for _, c := range r.conns {
			r.sendTo(c, noticeMsg{Type: "notice", Key: "ending-soon", EndsAt: &at})
		}
	}
	idle := r.hub.IdleTimeout
	if idle == 0 {
		idle = 2 * time.Minute
	}
	if len(r.conns) == 0 && now.Sub(r.emptyAt) >= idle {
		r.checkQuiz(now, true)
		if r.stop(false) {
			r.stopRecording()
			// A room that closed because it was empty opens afresh,
			// as recording goes: automatic recording starts again.
			r.setRecordingState(lms.SittingNotRecorded)
		}
	}
}

// saveSitting writes the sitting's state, with the events the change
// raises; a failure is logged.
func (r *Room) saveSitting(events ...hook.Event) {
	r.logWrite("save sitting", r.hub.Store.SaveFencedSitting(context.Background(), r.key.Domain, r.fence(), r.sitting, events...))
}

// end closes the sitting for everyone, for good.
func (r *Room) end(reason string) {
	r.sitting.EndedAt = r.now().Truncate(time.Second)
	r.saveSitting(hook.ClassEndedEvent(r.sitting))
	r.shutdown("ended", reason)
}

// shutdown announces the end (when reason is given), closes every
// connection and stops the room.
func (r *Room) shutdown(kind, reason string) {
	r.checkQuiz(r.now(), true)
	if kind != "" {
		r.broadcast(eventMsg{Kind: kind, Reason: reason}, nil, nil)
	}
	for _, c := range r.conns {
		r.detach(c, reason)
	}
	r.stopRecording()
	r.stop(true)
}

// stop forgets the room (unless it still has work and force is false)
// and reports whether it stopped.
func (r *Room) stop(force bool) bool {
	if r.stopped {
		return true
	}
	if !r.hub.remove(r, force) {
		return false
	}
	r.stopped = true
	if r.media != nil {
		r.media.Close()
	}
	// Wake the loop so it sees stopped.
	select {
	case r.q.wake <- struct{}{}:
	default:
	}
	return true
}

// broadcast sequences an event and sends it to to (nil: everyone); skip,
// if set, does not get it (it learns the state another way).
func (r *Room) broadcast(ev eventMsg, to []string, skip *Conn) {
	r.seq++
	ev.Type, ev.Seq = "event", r.seq
	data, err := json.Marshal(ev)
	if err != nil {
		panic(err) // event types always marshal
	}
	r.ring = append(r.ring, event{seq: r.seq, to: to, data: data})
	if to == nil { // private messages stay out of recordings
		r.logEvent(ev, data)
	}
	if len(r.ring) > eventRing {
		r.ring = slices.Delete(r.ring, 0, len(r.ring)-eventRing)
	}
	for _, c := range r.conns {
		if c == skip || (to != nil && !slices.Contains(to, c.user)) {
			continue
		}
		c.push(data)
	}
}

// sendTo sends an unsequenced message to one connection.
func (r *Room) sendTo(c *Conn, msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	c.push(data)
}

// tell sends a notice to every connection of a user.
func (r *Room) tell(u *user, key, by string) {
	for _, c := range u.conns {
		r.sendTo(c, noticeMsg{Type: "notice", Key: key, By: by})
	}
}

// changed broadcasts a participant's new state.
func (r *Room) changed(u *user, skip *Conn) {
	p := r.participant(u)
	r.broadcast(eventMsg{Kind: "update", Participant: &p}, nil, skip)
}

func (r *Room) participant(u *user) Participant {
	p := Participant{UserID: u.id, Name: u.name, Role: role(u), Devices: len(u.conns), Hand: u.hand,
		CanAudio: r.can(u, permAudio), CanVideo: r.can(u, permVideo), CanScreen: r.can(u, permScreen),
		CanDraw: r.can(u, permDraw), CanFiles: r.can(u, permFiles), Quality: u.quality}
	for _, s := range r.streams {
		if s.user != u.id {
			continue
		}
		switch s.label {
		case LabelMic:
			p.Audio = true
		case LabelCamera:
			p.Video = true
		case LabelScreen:
			p.Screen = true
		}
		p.Speaking = p.Speaking || s.speaking
	}
	return p
}

func (r *Room) snapshot(u *user) Snapshot {
	s := Snapshot{Participants: []Participant{}, Chat: []ChatMessage{}, Hands: r.handList(), Streams: []StreamInfo{},
		Board: r.board.snapshot(), Presentation: r.presentation, Files: r.fileList(), Recording: r.recording,
		DrawAll: r.drawAll, FilesAll: r.filesAll, Quiz: r.quizState(), QuizTests: r.quizTests(u),
		QuizMine: r.quizMine(u)}
	for _, id := range r.order {
		if p := r.users[id]; len(p.conns) > 0 {
			s.Participants = append(s.Participants, r.participant(p))
		}
	}
	for _, m := range r.chat {
		if m.To == "" || m.To == u.id || m.From == u.id {
			s.Chat = append(s.Chat, m)
		}
	}
	for _, st := range r.sortedStreams() {
		s.Streams = append(s.Streams, StreamInfo{ID: st.id, UserID: st.user, Label: st.label})
	}
	return s
}

func (r *Room) sortedStreams() []*stream {
	out := make([]*stream, 0, len(r.streams))
	for _, s := range r.streams {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *stream) int {
		if a.id < b.id {
			return -1
		}
		if a.id > b.id {
			return 1
		}
		return 0
	})
	return out
}

func (r *Room) handList() []string {
	out := make([]string, len(r.hands))
	copy(out, r.hands)
	return out
}

func (r *Room) settings() Settings {
	c := r.class
	return Settings{Board: c.IsBoard, Corporate: c.IsCorporate, Screenshare: c.IsScreenshare,
		PrivateChat: c.IsPrivateChat, Lang: c.IsLang, Record: r.recordSetting(), Extend: r.extendSetting(),
		Seats: c.SeatAttendees}
}

// recordSetting is the class's record value, 0 on a plan without
// recording.
func (r *Room) recordSetting() int {
	if !r.plan.Recording {
		return 0
	}
	return r.class.Record
}

// extendSetting is 1 (fixed end) when any teacher link of the sitting
// said isExtend=1; the first teacher's link decides.
func (r *Room) extendSetting() int {
	for _, id := range r.order {
		if u := r.users[id]; u.teacher {
			for _, c := range u.conns {
				return c.extend
			}
		}
	}
	return 1
}

func (r *Room) lang() string {
	if r.hub.Lang == nil {
		return ""
	}
	return r.hub.Lang(r.class.IsLang)
}

func role(u *user) string {
	if u.teacher {
		return "teacher"
	}
	return "student"
}

func wireChat(m lms.ChatMessage) ChatMessage {
	return ChatMessage{ID: m.ID, From: m.From, FromName: m.FromName, To: m.To, Text: m.Text, At: m.At}
}

// Participants returns the users present, for tests and metrics.
func (r *Room) Participants() []Participant {
	var out []Participant
	r.do(func() {
		for _, id := range r.order {
			if u := r.users[id]; len(u.conns) > 0 {
				out = append(out, r.participant(u))
			}
		}
	})
	return out
}
