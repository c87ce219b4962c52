package classroom

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
	"github.com/lectern-lms/lectern/internal/store"
)

// PlaybackFileTTL is how long the links a playback page hands its player
// work.
const PlaybackFileTTL = 6 * time.Hour

// playbackFile is one file of a recording as the playback page sees it.
type playbackFile struct {
	URL string `json:"url"`
	// Name is the file's name, as the event log's file lines know it
	// (their spans tell where a file with cuts plays).
	Name        string `json:"name"`
	Role        string `json:"role"`
	UserID      string `json:"userId"`
	Label       string `json:"label"`
	ContentType string `json:"type"`
	StartMS     int64  `json:"startMs"`
	DurationMS  int64  `json:"durationMs"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
}

// verifiedRecording checks a recording link (the signature covers the
// recording id) and loads the recording.
func (p *Pages) verifiedRecording(w http.ResponseWriter, r *http.Request) (store.Domain, lms.Recording, bool) {
	d, id, ok := p.verifyLink(w, r, "id", signing.VerifyRecording)
	if !ok {
		return d, lms.Recording{}, false
	}
	rec, err := p.Store.Recording(r.Context(), d.ID, id)
	if err != nil {
		p.missing(w, err, "Recording not found", "This recording has been removed.")
		return d, rec, false
	}
	return d, rec, true
}

// missing answers a not-found page, or logs an internal error.
func (p *Pages) missing(w http.ResponseWriter, err error, title, msg string) {
	if lms.IsNotFound(err) || errors.Is(err, blob.ErrNotFound) {
		p.page(w, http.StatusNotFound, errorPage, map[string]string{"Title": title, "Message": msg})
		return
	}
	p.Logger.Error("classroom page", "err", err)
	p.page(w, http.StatusInternalServerError, errorPage, map[string]string{"Title": "Something went wrong",
		"Message": "This page could not be loaded. Try again in a moment."})
}

// playback is a recording's playback page (record_path): the videos, the
// board, the slides and the chat on one timeline, from the recording's
// files and event log. An imported recording plays its one file.
func (p *Pages) playback(w http.ResponseWriter, r *http.Request) {
	d, rec, ok := p.verifiedRecording(w, r)
	if !ok {
		return
	}
	files, err := p.Store.RecordingFiles(r.Context(), d.ID, rec.ID)
	if err != nil {
		p.missing(w, err, "", "")
		return
	}
	expires := p.now().Add(PlaybackFileTTL)
	title := rec.Name
	if c, err := p.Store.LiveClass(r.Context(), d.ID, rec.ClassID); err == nil {
		title = c.Title + " · " + rec.DateRecorded
	}
	// Presentations in the event log carry links that expire; the player
	// gets fresh ones to every file shared in the class.
	shared := map[string]string{}
	roomFiles, err := p.Store.RoomFiles(r.Context(), d.ID, rec.ClassID)
	if err != nil {
		p.missing(w, err, "", "")
		return
	}
	for _, f := range roomFiles {
		shared[strconv.FormatInt(f.ID, 10)] = p.fileURL(d, f, expires)
	}
	boot := map[string]any{"title": title, "state": rec.State, "durationMs": rec.DurationMS, "events": "",
		"files": []playbackFile{}, "sharedFiles": shared}
	var out []playbackFile
	for _, f := range files {
		url := signing.RecordingFileURL("", d.LaunchSecret, d.ID, rec.ID, f.ID, expires)
		if f.Role == "events" {
			boot["events"] = url
			continue
		}
		out = append(out, playbackFile{URL: url, Name: f.Name, Role: f.Role, UserID: f.UserRef, Label: f.Label, ContentType: f.ContentType,
			StartMS: f.StartMS, DurationMS: f.DurationMS, Width: f.Width, Height: f.Height})
	}
	if len(files) == 0 && rec.BlobKey != "" { // an imported file
		out = append(out, playbackFile{URL: signing.RecordingURL("", d.LaunchSecret, d.ID, rec.ID, expires), Role: "media",
			Label: "camera", ContentType: rec.ContentType, DurationMS: rec.DurationMS})
	}
	if out != nil {
		boot["files"] = out
	}
	p.shell(w, "playback", rec.Name, boot)
}

// recordingFile serves one file of a recording behind its signed link,
// with ranges (seeking).
func (p *Pages) recordingFile(w http.ResponseWriter, r *http.Request) {
	d, id, ok := p.verifyLink(w, r, "file", signing.VerifyRecordingFile)
	if !ok {
		return
	}
	recID, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	files, err := p.Store.RecordingFiles(r.Context(), d.ID, recID)
	var f lms.RecordingFile
	err = lms.NotFoundf("file %d not found", id)
	for _, rf := range files {
		if rf.ID == id {
			f, err = rf, nil
		}
	}
	var bf blob.File
	if err == nil {
		bf, err = p.Blobs.Open(f.BlobKey)
	}
	if err != nil {
		p.missing(w, err, "File not found", "This recording has been removed.")
		return
	}
	defer bf.Close()
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": f.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, f.Name, bf.ModTime(), bf)
}
