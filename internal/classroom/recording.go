package classroom

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/classroom/record"
	"github.com/lectern-lms/lectern/internal/classroom/room"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// Recordings makes the recorders of live rooms: their files go straight
// into the blob folder (a crash leaves what was written, playable), their
// rows into the store, one per segment (isVideo 0) or one per sitting
// (isVideo 1).
type Recordings struct {
	Store *store.Store
	// BlobRoot is the folder of the local blob store.
	BlobRoot string
	Logger   *slog.Logger
	Now      func() time.Time
	// Exporter makes each finished recording's MP4; nil when ffmpeg is
	// not installed.
	Exporter *Exporter
	// Blobs is the blob store the files end in (see recording_blobs.go);
	// nil means BlobRoot itself.
	Blobs blob.Store
	// Fence returns the lease this node holds a room under (on a
	// cluster): a recorder's rows and files are written under it, and
	// refused once another node took the room over. nil fences nothing.
	Fence func(k room.Key) store.Fence
}

func (rs *Recordings) fence(k room.Key) store.Fence {
	if rs.Fence == nil {
		return store.Fence{}
	}
	return rs.Fence(k)
}

func (rs *Recordings) now() time.Time {
	if rs.Now != nil {
		return rs.Now()
	}
	return time.Now()
}

// Factory is the room service's RecorderFactory.
func (rs *Recordings) Factory(k room.Key, c lms.LiveClass, media room.Media, onError func(error)) (room.Recorder, error) {
	b := make([]byte, 8)
	rand.Read(b)
	prefix := path.Join("recordings", fmt.Sprint(k.Domain), fmt.Sprintf("%d-%d-%s", k.Class, k.Sitting, hex.EncodeToString(b)))
	// A sitting recorded before (on a node that died, or before a
	// restart) goes on in its next segment.
	first, err := rs.Store.NextRecordingSegment(context.Background(), k.Domain, k.Class, k.Sitting)
	if err != nil {
		return nil, err
	}
	sr := &sittingRecorder{rs: rs, key: k, class: c, prefix: prefix, rows: map[int]lms.Recording{}, segment: first, first: first}
	opts := record.Options{Join: c.IsVideo == 1, OnError: onError, Now: rs.Now, Logger: rs.Logger}
	if m, ok := media.(*sfuMedia); ok {
		sr.media = m
		opts.RequestKeyframe = m.r.RequestKeyframe
	}
	sr.rec = record.New(record.DirStorage{Dir: filepath.Join(rs.BlobRoot, filepath.FromSlash(prefix))}, opts)
	if sr.media != nil {
		sr.media.r.SetTap(sr.rec)
	}
	return sr, nil
}

// sittingRecorder adapts a record.Recorder to the room and keeps its
// recordings' rows.
type sittingRecorder struct {
	rs     *Recordings
	key    room.Key
	class  lms.LiveClass
	prefix string
	media  *sfuMedia
	rec    *record.Recorder

	mu      sync.Mutex
	started bool
	segment int
	first   int                   // the segment this recorder started at
	rows    map[int]lms.Recording // by segment
}

// Start starts the recording or a new segment, and shows it as
// "recording" in the API.
func (s *sittingRecorder) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if !s.started {
		err = s.rec.Start()
	} else {
		err = s.rec.Resume()
		s.segment++
	}
	if err != nil {
		return err
	}
	first := !s.started
	s.started = true
	if first || s.class.IsVideo == 0 {
		seg := s.segment
		now := s.rs.now().UTC()
		r, err := s.rs.Store.AddFencedRecording(context.Background(), s.key.Domain, s.rs.fence(s.key), lms.Recording{ClassID: s.key.Class,
			Name: fmt.Sprintf("%s, sitting %d, part %d", s.class.Title, s.key.Sitting, seg+1), FName: "",
			ContentType: "video/webm", Status: 1, DateRecorded: now.Format("2006-01-02 15:04:05"),
			State: lms.RecordingActive, OccurrenceSeq: s.key.Sitting, Segment: seg})
		if err != nil {
			s.rs.Logger.Error("record a recording's row", "class", s.key.Class, "err", err)
		} else {
			s.rows[seg] = r
		}
	}
	return nil
}

func (s *sittingRecorder) Pause() {
	if err := s.rec.Pause(); err != nil {
		s.rs.Logger.Warn("pause recording", "class", s.key.Class, "err", err)
	}
}

func (s *sittingRecorder) Event(kind string, data json.RawMessage) { s.rec.Event(kind, data) }

// Stop finishes the files in the background and then the rows: ready
// with their files, or failed.
func (s *sittingRecorder) Stop() {
	if s.media != nil {
		s.media.r.SetTap(nil)
	}
	go func() {
		files, err := s.rec.Stop()
		s.mu.Lock()
		rows := s.rows
		s.mu.Unlock()
		s.finish(rows, files, err)
	}()
}

// finish writes each segment's row: its media files, the sitting's event
// log, duration, size and main file (the teacher's video if any).
func (s *sittingRecorder) finish(rows map[int]lms.Recording, files []record.FileInfo, recErr error) {
	ctx := context.Background()
	segs := make([]int, 0, len(rows))
	for seg := range rows {
		segs = append(segs, seg)
	}
	slices.Sort(segs)
	teachers := s.teacherIDs()
	// A node that lost the room copies nothing: its rows are no longer
	// its own (the new owner marked them failed).
	fence := s.rs.fence(s.key)
	if err := s.rs.Store.CheckFence(ctx, fence); err != nil {
		s.rs.Logger.Warn("a recording of a room another node took over is not kept", "class", s.key.Class, "err", err)
		return
	}
	uploadErr := s.rs.uploadSitting(s.prefix)
	if uploadErr != nil {
		s.rs.Logger.Error("copy a recording's files to the blob store", "class", s.key.Class, "err", uploadErr)
		recErr = errors.Join(recErr, uploadErr)
	}
	// The event log is still in the local folder (a spool folder is
	// dropped only below); its size is the recording's size when it has no
	// media (a board-only class).
	var eventsSize int64
	if fi, err := os.Stat(filepath.Join(s.rs.BlobRoot, filepath.FromSlash(s.prefix), record.EventsFile)); err == nil {
		eventsSize = fi.Size()
	}
	for _, seg := range segs {
		r := rows[seg]
		var out []lms.RecordingFile
		spans := map[string][]record.Span{} // of the files with cuts, by blob key
		var start, end int64 = -1, 0
		for _, f := range files {
			// Joined (isVideo 1): one row holds every file.
			if s.class.IsVideo == 0 && s.first+f.Segment != seg {
				continue
			}
			ctype := `video/webm; codecs="vp8"`
			switch {
			case !slices.Contains(f.Kinds, "video"):
				ctype = `audio/webm; codecs="opus"`
			case slices.Contains(f.Kinds, "audio"):
				ctype = `video/webm; codecs="vp8,opus"`
			}
			if len(f.Spans) > 1 {
				spans[path.Join(s.prefix, f.Name)] = f.Spans
			}
			out = append(out, lms.RecordingFile{Role: "media", BlobKey: path.Join(s.prefix, f.Name), Name: f.Name,
				ContentType: ctype, UserRef: f.UserID, Label: f.Label, StartMS: f.StartMs, DurationMS: f.DurationMs,
				Width: f.Width, Height: f.Height, Size: f.Size})
			if start < 0 || f.StartMs < start {
				start = f.StartMs
			}
			end = max(end, f.StartMs+f.DurationMs)
			if len(f.Spans) > 0 {
				end = max(end, f.Spans[len(f.Spans)-1].EndMs)
			}
		}
		out = append(out, lms.RecordingFile{Role: "events", BlobKey: path.Join(s.prefix, record.EventsFile),
			Name: record.EventsFile, ContentType: "application/x-ndjson", Size: eventsSize})
		r.State = lms.RecordingReady
		if recErr != nil && len(out) == 1 || uploadErr != nil {
			r.State = lms.RecordingFailed
		}
		if start >= 0 {
			r.DurationMS = end - start
		}
		main := mainFile(out, teachers)
		r.BlobKey, r.Name, r.ContentType, r.Size = main.BlobKey, main.Name, main.ContentType, main.Size
		if seg > 0 || s.class.IsVideo == 0 {
			r.Name = fmt.Sprintf("part%d-%s", seg+1, main.Name)
		}
		if err := s.rs.Store.FinishFencedRecording(ctx, s.key.Domain, fence, r, out); err != nil {
			s.rs.Logger.Error("finish a recording", "class", s.key.Class, "recording", r.ID, "err", err)
			continue
		}
		if r.State == lms.RecordingReady && start >= 0 {
			s.rs.export(s.key.Domain, r, out, spans, start, teachers, path.Join(s.prefix, fmt.Sprintf("recording-part%d.mp4", seg+1)))
		}
	}
	if recErr != nil {
		s.rs.Logger.Error("recording ended with an error", "class", s.key.Class, "err", recErr)
	}
	if uploadErr == nil {
		s.rs.dropSpool(s.prefix)
	}
}

// export makes a recording's MP4 (its files moved to start at 0), or
// says it cannot.
func (rs *Recordings) export(domain int64, r lms.Recording, files []lms.RecordingFile, spans map[string][]record.Span, start int64, teachers map[string]bool, key string) {
	ctx := context.Background()
	set := func(state string, progress int, f *lms.RecordingFile) {
		if err := rs.Store.SetRecordingExport(ctx, domain, r.ID, state, progress, f); err != nil {
			rs.Logger.Error("record export progress", "recording", r.ID, "err", err)
		}
	}
	if rs.Exporter == nil {
		set("unavailable", 0, nil)
		return
	}
	set("running", 0, nil)
	shifted := make([]lms.RecordingFile, len(files))
	for i, f := range files {
		f.StartMS -= start
		shifted[i] = f
	}
	cuts := make(map[string][]record.Span, len(spans))
	for k, list := range spans {
		for _, sp := range list {
			cuts[k] = append(cuts[k], record.Span{StartMs: sp.StartMs - start, EndMs: sp.EndMs - start})
		}
	}
	last := 0
	out := filepath.Join(rs.BlobRoot, filepath.FromSlash(key))
	err := rs.Exporter.Export(ctx, rs.BlobRoot, shifted, cuts, teachers, r.DurationMS, out, func(p int) {
		if p >= last+5 && p < 100 {
			last = p
			set("running", p, nil)
		}
	})
	if err != nil {
		rs.Logger.Error("export a recording", "recording", r.ID, "err", err)
		set("failed", last, nil)
		return
	}
	st, err := os.Stat(out)
	if err == nil {
		err = rs.upload(key)
	}
	if err != nil {
		rs.Logger.Error("keep a recording's export", "recording", r.ID, "err", err)
		set("failed", last, nil)
		return
	}
	set("ready", 100, &lms.RecordingFile{Role: "mp4", BlobKey: key, Name: path.Base(key), ContentType: "video/mp4",
		DurationMS: r.DurationMS, Width: rs.Exporter.Width, Height: rs.Exporter.Height, Size: st.Size()})
}

// teacherIDs are the user ids the class's teachers used (from the
// attendance of the sitting).
func (s *sittingRecorder) teacherIDs() map[string]bool {
	ids := map[string]bool{}
	evs, err := s.rs.Store.Attendance(context.Background(), s.key.Domain, s.key.Class, "")
	if err != nil {
		return ids
	}
	for _, e := range evs {
		if e.IsTeacher && e.OccurrenceSeq == s.key.Sitting {
			ids[e.UserRef] = true
		}
	}
	return ids
}

// mainFile is what record_url downloads: the teacher's screen, else the
// teacher's camera, else any video, else any file; of those, the longest
// (a stream that stopped and started again has several files). With
// isRecordingLayout 1, the teacher's capture of the classroom tab comes
// first: it is the recording.
func mainFile(files []lms.RecordingFile, teachers map[string]bool) lms.RecordingFile {
	rank := func(f lms.RecordingFile) int {
		switch {
		case f.Role != "media":
			return 9
		case f.Label == room.LabelRecording:
			return -1
		case teachers[f.UserRef] && f.Label == room.LabelScreen:
			return 0
		case teachers[f.UserRef] && f.Label == room.LabelCamera:
			return 1
		case strings.HasPrefix(f.ContentType, "video/"):
			return 2
		}
		return 3
	}
	best := files[0]
	for _, f := range files[1:] {
		if r, b := rank(f), rank(best); r < b || r == b && f.DurationMS > best.DurationMS {
			best = f
		}
	}
	return best
}

// Sweep deletes, with their files, the recordings older than their
// domain's retention at instant now, and returns how many it deleted.
func (rs *Recordings) Sweep(ctx context.Context, blobs blob.Store, now time.Time) (int, error) {
	n := 0
	for {
		expired, err := rs.Store.ExpiredRecordings(ctx, now, 100)
		if err != nil || len(expired) == 0 {
			return n, err
		}
		for _, e := range expired {
			keys, err := rs.Store.RecordingKeys(ctx, e.DomainID, e.Recording)
			if err != nil {
				return n, err
			}
			if _, err := rs.Store.DeleteRecording(ctx, e.DomainID, e.Recording.ID); err != nil {
				return n, err
			}
			for _, k := range keys {
				if k == "" {
					continue
				}
				if err := blobs.Delete(k); err != nil {
					rs.Logger.Error("delete an expired recording's file", "key", k, "err", err)
				}
			}
			n++
		}
	}
}

// RunRetention sweeps expired recordings every interval until ctx is
// done.
func (rs *Recordings) RunRetention(ctx context.Context, blobs blob.Store, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := rs.Sweep(ctx, blobs, rs.now()); err != nil {
			rs.Logger.Error("recording retention", "err", err)
		} else if n > 0 {
			rs.Logger.Info("deleted recordings past their domain's retention", "recordings", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
