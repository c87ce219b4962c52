// Package loadtest measures the live classroom's media forwarding under
// load: one teacher publishing a camera (VP8) and a microphone (Opus) to N
// students in one room. Every participant is a synthetic pion client in
// this process, speaking the classroom protocol (docs/classroom-protocol.md)
// to a running Lectern server over loopback; no browser is involved.
//
// Run schedules a class that is live now through the classroom API, brings
// the teacher in and has it publish, brings the students in, waits until
// they all receive both streams (or a timeout), lets the room warm up, and
// then measures over a window: packets received and lost per student, and
// the CPU time and memory of the server process (and of this process, which
// competes with the server for the same CPUs). These come from /proc, so
// the package works on Linux only.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/webrtc/v4"
)

// Options configure a run.
type Options struct {
	// BaseURL is the Lectern server, such as "http://127.0.0.1:8080". Its
	// host must be a loopback address: the synthetic clients send media
	// over loopback only.
	BaseURL string
	// ClassroomKey is the classroom API key (apikey) of a domain on a plan
	// that admits Students students.
	ClassroomKey string
	// Students is the number of students (at least 1).
	Students int
	// Duration is the measurement window; default 20 s.
	Duration time.Duration
	// Warmup is the pause between the students' joining and the window;
	// default 5 s.
	Warmup time.Duration
	// JoinTimeout bounds the time from the first student's launch until
	// every student receives video and audio; the window starts after it
	// with the students that made it. Default: 30 s plus 250 ms per
	// student.
	JoinTimeout time.Duration
	// ServerPID is the server's process id, whose CPU time and memory are
	// read from /proc; 0 measures no server.
	ServerPID int
	// VideoKbps is the teacher's camera bitrate; default 1000.
	VideoKbps int
	// FPS is the camera's frame rate; default 30.
	FPS int
	// Logger receives progress and problems; nil discards them.
	Logger *slog.Logger
}

// Result is what a run measured. Rates and losses are over the window.
type Result struct {
	Students  int // students asked for
	Joined    int // students that were welcomed into the room
	Connected int // students receiving both streams when the window opened
	// JoinErrors counts students that could not join; FirstError is the
	// first such error.
	JoinErrors int
	FirstError string
	// JoinTime is from the first student's launch until every joined
	// student received video and audio (JoinTimeout if some never did).
	JoinTime time.Duration
	// Window is the measurement window's real length.
	Window time.Duration

	Video, Audio Stream

	// Server is the server process (zero when ServerPID is 0), Tool this
	// process: the synthetic clients.
	Server, Tool Process
	// MachineCPU is the CPU time of the whole machine over the window, in
	// cores, out of CPUs.
	MachineCPU float64
	CPUs       int
}

// Stream is what the students received of one of the teacher's streams.
type Stream struct {
	// SentPerSec is the teacher's rate, in RTP packets per second.
	SentPerSec float64
	// MeanPerSec and MinPerSec are the packets per second received by a
	// student, the mean and the lowest over joined students.
	MeanPerSec, MinPerSec float64
	// MeanKbps is the mean RTP bitrate received by a student.
	MeanKbps float64
	// MeanLoss and WorstLoss are the packet loss, in percent, averaged over
	// students and the highest: the sequence numbers missing from the
	// span a student received. A student that received nothing in the
	// window counts as 100 %.
	MeanLoss, WorstLoss float64
	// MeanBehind and WorstBehind are how far students lagged behind the
	// teacher at the window's end: the packets sent and not yet received,
	// as time at the sending rate. A few packets are always in flight; a
	// lag that grows means packets queue somewhere (a starved server or
	// client) rather than being lost.
	MeanBehind, WorstBehind time.Duration
}

// Process is the load of one process over the window.
type Process struct {
	CPU        float64 // CPU time over wall time: 1.0 is one core busy
	RSSMiB     float64 // resident memory at the end of the window
	PeakRSSMiB float64 // the highest resident memory since the process started
}

// Defaults.
const (
	defaultDuration  = 20 * time.Second
	defaultWarmup    = 5 * time.Second
	defaultVideoKbps = 1000
	defaultFPS       = 30
	// joinParallel is how many students are joining at once.
	joinParallel = 8
	// connectTimeout bounds the teacher's publishing PeerConnections.
	connectTimeout = 15 * time.Second
	// setupTimeout bounds scheduling the class and the teacher's entry.
	setupTimeout = 30 * time.Second
	// teardownTimeout bounds closing everything at the end.
	teardownTimeout = 30 * time.Second
)

var errStopped = errors.New("the run is stopping")

func (o Options) withDefaults() (Options, error) {
	if o.Students < 1 {
		return o, errors.New("loadtest: Students must be at least 1")
	}
	if o.ClassroomKey == "" {
		return o, errors.New("loadtest: ClassroomKey is required")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return o, fmt.Errorf("loadtest: BaseURL %q is not an http(s) URL", o.BaseURL)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return o, fmt.Errorf("loadtest: BaseURL %q is not on loopback: the synthetic clients send media over loopback only", o.BaseURL)
	}
	if o.Duration <= 0 {
		o.Duration = defaultDuration
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = defaultWarmup
	}
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = 30*time.Second + time.Duration(o.Students)*250*time.Millisecond
	}
	if o.VideoKbps <= 0 {
		o.VideoKbps = defaultVideoKbps
	}
	if o.FPS <= 0 {
		o.FPS = defaultFPS
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// runner holds a run's shared parts and everything to close at its end.
type runner struct {
	o      Options
	log    *slog.Logger
	base   string
	http   *http.Client
	api    *webrtc.API
	sent   *sentCounter
	ctx    context.Context // ends at teardown
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup // every goroutine the run started
	parts   []*participant
}

// goroutine runs f in a goroutine that teardown waits for, unless the run
// is stopping; it reports whether f was started.
func (r *runner) goroutine(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.wg.Go(f)
	return true
}

// stopping reports whether teardown has begun.
func (r *runner) stopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// track registers a participant for teardown, unless the run is stopping.
func (r *runner) track(p *participant) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.parts = append(r.parts, p)
	return true
}

// Run runs one load test (see the package comment). It returns an error
// when the room cannot be set up (the class, the teacher's entry and
// publication) or ctx ends; students that fail to join are counted in the
// Result instead. Everything it opened is closed when it returns.
func Run(ctx context.Context, o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	sent := new(sentCounter)
	api, err := newAPI(o, sent)
	if err != nil {
		return Result{}, fmt.Errorf("loadtest: %w", err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &runner{
		o:      o,
		log:    o.Logger,
		base:   o.BaseURL,
		http:   &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: joinParallel}},
		api:    api,
		sent:   sent,
		ctx:    rctx,
		cancel: cancel,
	}
	defer r.teardown()
	res, err := r.run(ctx)
	if err != nil {
		return res, fmt.Errorf("loadtest: %w", err)
	}
	return res, nil
}

func (r *runner) run(ctx context.Context) (Result, error) {
	o := r.o
	res := Result{Students: o.Students, CPUs: runtime.NumCPU()}
	pid := ""
	if o.ServerPID != 0 {
		pid = strconv.Itoa(o.ServerPID)
		if _, err := readProc(pid); err != nil {
			return res, fmt.Errorf("server process: %w", err)
		}
	}

	// The class, and the teacher publishing.
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	class, err := r.scheduleClass(sctx, setupTimeout+o.JoinTimeout+o.Warmup+o.Duration)
	if err != nil {
		return res, err
	}
	r.log.Info("class scheduled", "class", class)
	teacher, err := r.enter(sctx, class, "t1", "Teacher", true)
	if err != nil {
		return res, fmt.Errorf("teacher: %w", err)
	}
	cam, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "camera", "teacher")
	if err != nil {
		return res, err
	}
	mic, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "mic", "teacher")
	if err != nil {
		return res, err
	}
	camSrc, micSrc := &source{track: cam}, &source{track: mic}
	camPeer, err := teacher.publish("cam-1", "camera", cam, camSrc)
	if err != nil {
		return res, fmt.Errorf("teacher camera: %w", err)
	}
	micPeer, err := teacher.publish("mic-1", "mic", mic, micSrc)
	if err != nil {
		return res, fmt.Errorf("teacher microphone: %w", err)
	}
	for _, pe := range []*peer{camPeer, micPeer} {
		if err := waitConnected(ctx, pe.pc); err != nil {
			return res, fmt.Errorf("teacher stream %s: %w", pe.stream, err)
		}
	}
	r.goroutine(func() { camSrc.video(r.ctx, o.VideoKbps, o.FPS) })
	r.goroutine(func() { micSrc.audio(r.ctx) })
	r.log.Info("teacher publishing", "video_kbps", o.VideoKbps, "fps", o.FPS)

	// The students.
	joinStart := time.Now()
	jctx, cancel := context.WithDeadline(ctx, joinStart.Add(o.JoinTimeout))
	defer cancel()
	students, errs := r.joinStudents(jctx, class)
	res.Joined = len(students)
	res.JoinErrors = len(errs)
	if len(errs) > 0 {
		res.FirstError = errs[0].Error()
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	receiving := func() int {
		n := 0
		for _, s := range students {
			if s.video.total() > 0 && s.audio.total() > 0 {
				n++
			}
		}
		return n
	}
	logged := time.Now()
	for receiving() < len(students) && jctx.Err() == nil {
		if time.Since(logged) >= 5*time.Second {
			r.log.Info("waiting for media", "receiving", receiving(), "joined", len(students))
			logged = time.Now()
		}
		sleep(jctx, 100*time.Millisecond)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.JoinTime = time.Since(joinStart)
	r.log.Info("students in", "joined", len(students), "receiving", receiving(), "errors", len(errs), "took", res.JoinTime.Round(time.Millisecond))

	if err := sleep(ctx, o.Warmup); err != nil {
		return res, err
	}

	// The window.
	res.Connected = receiving()
	before, err := r.measure(pid)
	if err != nil {
		return res, err
	}
	for _, s := range students {
		s.video.start()
		s.audio.start()
	}
	r.log.Info("measuring", "window", o.Duration)
	if err := sleep(ctx, o.Duration); err != nil {
		return res, err
	}
	for _, s := range students {
		s.video.stop()
		s.audio.stop()
	}
	after, err := r.measure(pid)
	if err != nil {
		return res, err
	}

	wall := after.machine.at.Sub(before.machine.at)
	res.Window = wall
	res.MachineCPU = cores(after.machine.busy-before.machine.busy, wall)
	res.Tool = process(before.tool, after.tool)
	if pid != "" {
		res.Server = process(before.server, after.server)
	}
	res.Video = streamResult(students, func(p *participant) *counter { return &p.video }, after.video.packets-before.video.packets, after.video.seq, wall)
	res.Audio = streamResult(students, func(p *participant) *counter { return &p.audio }, after.audio.packets-before.audio.packets, after.audio.seq, wall)
	return res, nil
}

// enter launches a user into class and joins the room.
func (r *runner) enter(ctx context.Context, class, userID, name string, teacher bool) (*participant, error) {
	launch, err := r.launchURL(ctx, class, userID, name, teacher)
	if err != nil {
		return nil, err
	}
	ws, session, err := r.session(ctx, launch)
	if err != nil {
		return nil, err
	}
	return r.join(ctx, ws, session, userID, teacher)
}

// joinStudents brings the students in, joinParallel at a time, until all
// have joined or ctx ends.
func (r *runner) joinStudents(ctx context.Context, class string) ([]*participant, []error) {
	n := r.o.Students
	next := make(chan int)
	go func() {
		defer close(next)
		for i := 1; i <= n; i++ {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		mu       sync.Mutex
		students []*participant
		errs     []error
		wg       sync.WaitGroup
	)
	for range min(joinParallel, n) {
		wg.Go(func() {
			for i := range next {
				id := "s" + strconv.Itoa(i)
				p, err := r.enter(ctx, class, id, "Student "+strconv.Itoa(i), false)
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("student %s: %w", id, err))
					if len(errs) <= 3 {
						r.log.Warn("student could not join", "user", id, "err", err)
					}
				} else {
					students = append(students, p)
				}
				if done := len(students) + len(errs); done%50 == 0 {
					r.log.Info("students joining", "joined", len(students), "failed", len(errs), "of", n)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(students)+len(errs) < n {
		errs = append(errs, fmt.Errorf("%d students were not launched before the join timeout", n-len(students)-len(errs)))
	}
	return students, errs
}

// waitConnected waits until pc is connected, for at most connectTimeout.
func waitConnected(ctx context.Context, pc *webrtc.PeerConnection) error {
	deadline := time.Now().Add(connectTimeout)
	for {
		switch st := pc.ConnectionState(); st {
		case webrtc.PeerConnectionStateConnected:
			return nil
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			return fmt.Errorf("connection %s", st)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not connected after %v (state %s)", connectTimeout, pc.ConnectionState())
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// reading is one end of the window.
type reading struct {
	server, tool procSample
	machine      machineSample
	video, audio sentReading // the teacher's
}

type sentReading struct {
	packets uint64 // RTP packets sent
	seq     uint16 // the last one's sequence number
}

func (r *runner) measure(pid string) (reading, error) {
	m := reading{
		video: sentReading{r.sent.video.packets.Load(), uint16(r.sent.video.seq.Load())},
		audio: sentReading{r.sent.audio.packets.Load(), uint16(r.sent.audio.seq.Load())},
	}
	var err error
	if pid != "" {
		if m.server, err = readProc(pid); err != nil {
			return m, fmt.Errorf("server process: %w", err)
		}
	}
	if m.tool, err = readProc("self"); err != nil {
		return m, err
	}
	if m.machine, err = readMachine(); err != nil {
		return m, err
	}
	return m, nil
}

func process(before, after procSample) Process {
	return Process{
		CPU:        cores(after.cpu-before.cpu, after.at.Sub(before.at)),
		RSSMiB:     mib(after.rss),
		PeakRSSMiB: mib(after.hwm),
	}
}

// streamResult sums up one stream over the students. sent is the packets
// the teacher sent in the window and seq the last one's sequence number.
func streamResult(students []*participant, track func(*participant) *counter, sent uint64, seq uint16, wall time.Duration) Stream {
	s := Stream{SentPerSec: float64(sent) / wall.Seconds()}
	if len(students) == 0 {
		return s
	}
	s.MinPerSec = -1
	var pps, kbps, loss, behind float64
	behindN := 0
	for _, p := range students {
		c := track(p)
		packets, bytes, expected, missing := c.window()
		rate := float64(packets) / wall.Seconds()
		pps += rate
		kbps += float64(bytes) * 8 / 1000 / wall.Seconds()
		if s.MinPerSec < 0 || rate < s.MinPerSec {
			s.MinPerSec = rate
		}
		l := 100.0
		if expected > 0 {
			l = 100 * float64(missing) / float64(expected)
		}
		loss += l
		s.WorstLoss = max(s.WorstLoss, l)
		if c.total() > 0 && s.SentPerSec > 0 {
			// Packets sent and not yet received, as time at the send rate.
			lag := max(0, int(int16(seq-c.highest())))
			d := time.Duration(float64(lag) / s.SentPerSec * float64(time.Second))
			behind += d.Seconds()
			behindN++
			s.WorstBehind = max(s.WorstBehind, d)
		}
	}
	n := float64(len(students))
	s.MeanPerSec, s.MeanKbps, s.MeanLoss = pps/n, kbps/n, loss/n
	if behindN > 0 {
		s.MeanBehind = time.Duration(behind / float64(behindN) * float64(time.Second))
	}
	return s
}

// teardown closes every socket and PeerConnection and waits for the run's
// goroutines, for at most teardownTimeout in all.
func (r *runner) teardown() {
	r.mu.Lock()
	r.stopped = true
	parts := r.parts
	r.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		// Sockets first: the server then ends the connections' media
		// itself, and does not re-offer subscriptions whose
		// PeerConnections close.
		parallel(len(parts), func(i int) {
			parts[i].ws.Close(websocket.StatusNormalClosure, "load test done")
		})
		var pcs []*webrtc.PeerConnection
		for _, p := range parts {
			pcs = append(pcs, p.shut()...)
		}
		parallel(len(pcs), func(i int) { pcs[i].Close() })
		r.cancel()
		r.wg.Wait()
	}()
	t := time.NewTimer(teardownTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.cancel()
		r.log.Warn("teardown: not everything closed in time", "timeout", teardownTimeout)
	}
	r.http.CloseIdleConnections()
}

// parallel calls f(0) ... f(n-1), 16 at a time.
func parallel(n int, f func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(16, n) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
