package room

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

type presentationMsg struct {
	Action string  `json:"action"`
	File   int64   `json:"file"`
	Page   int     `json:"page"`
	Zoom   float64 `json:"zoom"`
	Pages  int     `json:"pages"`
}

// present runs the teacher's presentation message: open a shared PDF,
// turn its page, zoom, close.
func (r *Room) present(m presentationMsg, fail func(code, msg string)) {
	p := r.presentation
	switch m.Action {
	case "open":
		f := r.file(m.File)
		if f == nil || f.Kind != "presentation" || f.Status != lms.FileReady {
			fail(ErrInvalid, "file must be a presentation shared in this class and ready to show.")
			return
		}
		if m.Pages < 0 || m.Pages > 10000 {
			fail(ErrInvalid, "pages must be 0-10000.")
			return
		}
		p = &Presentation{File: f.ID, Page: 1, Zoom: 1, Pages: m.Pages, URL: r.fileURL(*f)}
	case "page":
		if p == nil {
			fail(ErrInvalid, "No presentation is open.")
			return
		}
		if m.Page < 1 || (p.Pages > 0 && m.Page > p.Pages) {
			fail(ErrInvalid, "page must be between 1 and the presentation's last page.")
			return
		}
		p.Page = m.Page
	case "zoom":
		if p == nil {
			fail(ErrInvalid, "No presentation is open.")
			return
		}
		if m.Zoom < 0.25 || m.Zoom > 4 {
			fail(ErrInvalid, "zoom must be between 0.25 and 4.")
			return
		}
		p.Zoom = m.Zoom
	case "close":
		p = nil
	default:
		fail(ErrInvalid, "action must be open, page, zoom or close.")
		return
	}
	r.presentation = p
	r.sitting.Presentation = ""
	if p != nil {
		b, _ := json.Marshal(p)
		r.sitting.Presentation = string(b)
	}
	r.saveSitting()
	r.broadcast(eventMsg{Kind: "presentation", Presentation: p, Closed: p == nil}, nil, nil)
}

func (r *Room) file(id int64) *lms.RoomFile {
	for i := range r.files {
		if r.files[i].ID == id {
			return &r.files[i]
		}
	}
	return nil
}

// FileLinkLife is how long after a class's last sitting (or now, if
// later) shared files' links work: participants keep access after class.
const FileLinkLife = 7 * 24 * time.Hour

// FileLinkExpiry is when links to a class's shared files made at now stop
// working.
func FileLinkExpiry(c lms.LiveClass, now time.Time) time.Time {
	last := now
	for _, o := range c.Occurrences {
		if o.End.After(last) {
			last = o.End
		}
	}
	return last.Add(FileLinkLife).Truncate(time.Hour)
}

func (r *Room) fileURL(f lms.RoomFile) string {
	if r.hub.FileURL == nil {
		return ""
	}
	return r.hub.FileURL(r.key.Domain, f, FileLinkExpiry(r.class, r.now()))
}

// NewFileInfo is f as clients see it, with its download link.
func NewFileInfo(f lms.RoomFile, url string) FileInfo {
	return FileInfo{ID: f.ID, Name: f.Name, Size: f.Size, Type: f.ContentType, Kind: f.Kind, Status: f.Status,
		By: f.UserRef, ByName: f.UserName, At: f.CreatedAt, URL: url}
}

func (r *Room) fileInfo(f lms.RoomFile) FileInfo { return NewFileInfo(f, r.fileURL(f)) }

func (r *Room) fileList() []FileInfo {
	out := []FileInfo{}
	for _, f := range r.files {
		out = append(out, r.fileInfo(f))
	}
	return out
}

// loadFiles reads the class's shared files and the open presentation.
func (r *Room) loadFiles(ctx context.Context) error {
	files, err := r.hub.Store.RoomFiles(ctx, r.key.Domain, r.key.Class)
	if err != nil {
		return err
	}
	r.files = files
	if r.sitting.Presentation != "" {
		var p Presentation
		if json.Unmarshal([]byte(r.sitting.Presentation), &p) == nil {
			if f := r.file(p.File); f != nil {
				p.URL = r.fileURL(*f)
				r.presentation = &p
			}
		}
	}
	return nil
}

// CanShareFiles reports whether userID is in the room of k now and may
// share files there.
func (h *Hub) CanShareFiles(k Key, userID string) bool {
	r := h.Room(k)
	if r == nil {
		return false
	}
	ok := false
	r.do(func() {
		if u := r.users[userID]; u != nil && len(u.conns) > 0 {
			ok = r.can(u, permFiles)
		}
	})
	return ok
}

// FileShared tells the room of k about a new or changed shared file; the
// room announces it. A room that is not open learns of it when it opens.
func (h *Hub) FileShared(k Key, f lms.RoomFile) {
	r := h.Room(k)
	if r == nil {
		return
	}
	r.q.post(func() {
		if !r.loaded || r.stopped {
			return
		}
		if old := r.file(f.ID); old != nil {
			*old = f
		} else {
			r.files = append(r.files, f)
		}
		info := r.fileInfo(f)
		r.broadcast(eventMsg{Kind: "file", File: &info}, nil, nil)
	})
}
