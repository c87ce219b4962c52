package classroom

import (
	"context"
	"io"
	"mime"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// ImportRecording stores a recording file for a class: the bytes go to the
// blob store, then a row is added (status 1, published). If the row cannot
// be added the file is removed again. The class is named by id alone; the
// domain is the class's own.
func ImportRecording(ctx context.Context, st *store.Store, blobs blob.Store, classID int64, fileName string, r io.Reader, now time.Time) (lms.Recording, error) {
	domainID, err := st.ClassOwner(ctx, classID)
	if err != nil {
		return lms.Recording{}, err
	}
	cls, err := st.LiveClass(ctx, domainID, classID)
	if err != nil {
		return lms.Recording{}, err
	}
	key, size, err := blobs.Put("recordings/"+strconv.FormatInt(classID, 10), r)
	if err != nil {
		return lms.Recording{}, err
	}
	ctype := mime.TypeByExtension(filepath.Ext(fileName))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	day := now
	if loc, err := time.LoadLocation(cls.TimezoneName); err == nil {
		day = now.In(loc)
	}
	base := filepath.Base(fileName)
	rec, err := st.AddRecording(ctx, domainID, lms.Recording{
		ClassID: classID, Name: "class-" + strconv.FormatInt(classID, 10) + "-" + day.Format("20060102-150405") + filepath.Ext(base),
		FName: base, BlobKey: key, ContentType: ctype, Size: size, Status: 1, DateRecorded: day.Format("2006-01-02"),
	})
	if err != nil {
		blobs.Delete(key)
		return lms.Recording{}, err
	}
	return rec, nil
}
