package classroomapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/attendance"
	"github.com/lectern-lms/lectern/internal/classroomapi/wire"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/signing"
)

// RecordingLinkTTL is how long a record_url works.
const RecordingLinkTTL = time.Hour

// recordingRecord renders a recording with its signed links: record_url
// downloads the file, record_path plays it in the browser, export_url
// (given mp4, the recording's MP4 file, if made) downloads the MP4.
//
// status is the seed's 0/1: 1 only for a recording that is ready and
// published (changestatusrecording toggles publishing); state tells the
// lifecycle (recording, processing, ready, failed), duration its length
// (HH:MM:SS) and size its main file's bytes.
func (a *API) recordingRecord(c *call, r lms.Recording, mp4 *lms.RecordingFile) obj {
	link := signing.RecordingURL(a.BaseURL(), c.Domain.LaunchSecret, c.Domain.ID, r.ID, a.now().Add(RecordingLinkTTL))
	status := r.Status
	if r.State != lms.RecordingReady {
		status = 0
	}
	export := ""
	if r.ExportState == "ready" && mp4 != nil {
		export = signing.RecordingFileURL(a.BaseURL(), c.Domain.LaunchSecret, c.Domain.ID, r.ID, mp4.ID, a.now().Add(RecordingLinkTTL))
	}
	return obj{
		{"id", strconv.FormatInt(r.ID, 10)},
		{"classroom_id", strconv.FormatInt(r.ClassID, 10)},
		{"user_id", r.UserID},
		{"name", r.Name},
		{"fname", r.FName},
		{"status", strconv.Itoa(status)},
		{"date_recorded", r.DateRecorded},
		{"record_url", link + "&download=1"},
		{"record_path", playURL(link, r.ID)},
		{"state", r.State},
		{"duration", attendance.FormatDuration(time.Duration(r.DurationMS) * time.Millisecond)},
		{"size", strconv.FormatInt(r.Size, 10)},
		{"export", r.ExportState},
		{"export_progress", strconv.Itoa(r.ExportProgress)},
		{"export_url", export},
	}
}

// recordingRecords renders a page of recordings, reading their MP4 files
// in one query.
func (a *API) recordingRecords(ctx context.Context, c *call, recs []lms.Recording) ([]obj, error) {
	var ids []int64
	for _, r := range recs {
		if r.ExportState == "ready" {
			ids = append(ids, r.ID)
		}
	}
	mp4s, err := a.Store.RecordingFilesOfRole(ctx, c.Domain.ID, ids, "mp4")
	if err != nil {
		return nil, err
	}
	out := make([]obj, len(recs))
	for i, r := range recs {
		var mp4 *lms.RecordingFile
		if f, ok := mp4s[r.ID]; ok {
			mp4 = &f
		}
		out[i] = a.recordingRecord(c, r, mp4)
	}
	return out, nil
}

// playURL turns a recording's signed link into its playback page's (the
// same signature covers both).
func playURL(link string, id int64) string {
	path := "/recordings/" + strconv.FormatInt(id, 10)
	return strings.Replace(link, path+"?", path+"/play?", 1)
}

// getclassrecording: class_id, optional search (file names).
func (a *API) getClassRecording(ctx context.Context, c *call) (*result, error) {
	id, err := a.classID(ctx, c)
	if err != nil {
		return nil, err
	}
	recs, err := a.Store.ClassRecordings(ctx, c.Domain.ID, id, c.P.Get("search"))
	if err != nil {
		return nil, err
	}
	rs, err := a.recordingRecords(ctx, c, recs)
	if err != nil {
		return nil, err
	}
	return wire.Records("recording", rs, "Recording", "No video recording available"), nil
}

// ownedRecording loads a recording of the caller's domain by the named
// id parameter.
func (a *API) ownedRecording(ctx context.Context, c *call, param string) (lms.Recording, error) {
	id, err := requiredID(c.P, param)
	if err != nil {
		return lms.Recording{}, err
	}
	r, err := a.Store.Recording(ctx, c.Domain.ID, id)
	if lms.IsNotFound(err) {
		if _, err := a.Store.RecordingOwner(ctx, id); err == nil {
			return lms.Recording{}, fail("Invalid Recording Owner")
		}
		return lms.Recording{}, fail("Invalid %s: there is no recording %d", param, id)
	}
	return r, err
}

// getrecording: record_id.
func (a *API) getRecording(ctx context.Context, c *call) (*result, error) {
	r, err := a.ownedRecording(ctx, c, "record_id")
	if err != nil {
		return nil, err
	}
	rs, err := a.recordingRecords(ctx, c, []lms.Recording{r})
	if err != nil {
		return nil, err
	}
	return wire.Records("recording", rs, "", ""), nil
}

// changestatusrecording: id. Toggles the status between 1 (published)
// and 0 (unpublished) and answers the new one.
func (a *API) changeStatusRecording(ctx context.Context, c *call) (*result, error) {
	r, err := a.ownedRecording(ctx, c, "id")
	if err != nil {
		return nil, err
	}
	status, err := a.Store.ToggleRecordingStatus(ctx, c.Domain.ID, r.ID)
	if err != nil {
		return nil, err
	}
	return wire.Action("changestatusrecording", kv{"record_id", writeID(r.ID)}, kv{"recording_status", strconv.Itoa(status)}), nil
}

// removeclassrecording: id. Deletes the row, then the file.
func (a *API) removeClassRecording(ctx context.Context, c *call) (*result, error) {
	r, err := a.ownedRecording(ctx, c, "id")
	if err != nil {
		return nil, err
	}
	keys, err := a.Store.RecordingKeys(ctx, c.Domain.ID, r)
	if err != nil {
		return nil, err
	}
	if _, err := a.Store.DeleteRecording(ctx, c.Domain.ID, r.ID); err != nil {
		return nil, err
	}
	a.deleteBlobs(keys)
	return wire.Action("removeclassrecording", kv{"record_id", writeID(r.ID)}), nil
}

// deleteBlobs removes files whose rows are gone; a failure is logged.
func (a *API) deleteBlobs(keys []string) {
	for _, k := range keys {
		if k == "" {
			continue
		}
		if err := a.Blobs.Delete(k); err != nil {
			a.Logger.Error("delete a file", "key", k, "err", err)
		}
	}
}
