package room

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/internal/lms"
)

// Board limits (docs/classroom-whiteboard.md).
const (
	BoardWidth     = 1600
	BoardHeight    = 900
	MaxPoints      = 2000
	MaxPageObjects = 20000
	MaxPages       = 100
	MaxUndo        = 100
	maxTextRunes   = 2000
)

// Object is a whiteboard object as clients and the store see it.
type Object struct {
	ID     string `json:"id"`
	Page   string `json:"page"`
	Tool   string `json:"tool"`
	Color  string `json:"color"`
	Width  int    `json:"width"`
	Points []int  `json:"points"`
	Text   string `json:"text,omitempty"`
	Size   int    `json:"size,omitempty"`
	By     string `json:"by"`
	Seq    int64  `json:"seq"`
	ord    int64
}

// BoardPage is one page in a snapshot.
type BoardPage struct {
	ID      string    `json:"id"`
	Objects []*Object `json:"objects"`
}

// BoardState is the board in a snapshot.
type BoardState struct {
	Page  string      `json:"page"`
	Pages []BoardPage `json:"pages"`
}

type boardMsg struct {
	Op     string   `json:"op"`
	Object *Object  `json:"object,omitempty"`
	Page   string   `json:"page,omitempty"`
	IDs    []string `json:"ids,omitempty"`
	DX     int      `json:"dx,omitempty"`
	DY     int      `json:"dy,omitempty"`
	Tool   string   `json:"tool,omitempty"`
	Color  string   `json:"color,omitempty"`
	Width  int      `json:"width,omitempty"`
	Points []int    `json:"points,omitempty"`
	X      int      `json:"x,omitempty"`
	Y      int      `json:"y,omitempty"`
	Off    bool     `json:"off,omitempty"`
	ID     string   `json:"id,omitempty"`
}

// board is a room's whiteboard: pages of objects in drawing order.
type board struct {
	page  string
	pages map[string]*page
	order []string // page ids in order of first use
	undo  map[string][]change
	redo  map[string][]change
}

type page struct {
	objs []*Object
	idx  map[string]int
}

// change is a stored operation as a user's undo stack keeps it.
type change struct {
	op      string // add, move, erase, clear
	page    string
	objects []*Object // add: the added; erase, clear: the removed
	ids     []string
	dx, dy  int
}

func newBoard() *board {
	return &board{page: "p1", pages: map[string]*page{}, undo: map[string][]change{}, redo: map[string][]change{}}
}

func (b *board) get(id string) *page {
	p := b.pages[id]
	if p == nil {
		p = &page{idx: map[string]int{}}
		b.pages[id] = p
		b.order = append(b.order, id)
	}
	return p
}

func (p *page) add(o *Object) {
	p.idx[o.ID] = len(p.objs)
	p.objs = append(p.objs, o)
}

// remove takes objects out by id and returns them (in drawing order).
func (p *page) remove(ids []string) []*Object {
	var out []*Object
	for _, id := range ids {
		if i, ok := p.idx[id]; ok {
			out = append(out, p.objs[i])
			p.objs[i] = nil
			delete(p.idx, id)
		}
	}
	if len(out) > 0 {
		p.objs = slices.DeleteFunc(p.objs, func(o *Object) bool { return o == nil })
		for i, o := range p.objs {
			p.idx[o.ID] = i
		}
	}
	return out
}

func (p *page) restore(objs []*Object) {
	for _, o := range objs {
		if _, ok := p.idx[o.ID]; !ok {
			p.add(o)
		}
	}
	slices.SortStableFunc(p.objs, func(a, b *Object) int { return int(a.ord - b.ord) })
	for i, o := range p.objs {
		p.idx[o.ID] = i
	}
}

func (b *board) snapshot() BoardState {
	s := BoardState{Page: b.page, Pages: []BoardPage{}}
	for _, id := range b.order {
		s.Pages = append(s.Pages, BoardPage{ID: id, Objects: append([]*Object{}, b.pages[id].objs...)})
	}
	return s
}

var (
	objectID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	pageID   = regexp.MustCompile(`^(p[0-9]{1,3}|pdf:[0-9]{1,18}:[0-9]{1,5})$`)
	colorRe  = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	tools    = map[string]int{"pen": -1, "highlighter": -1, "line": 4, "arrow": 4, "rect": 4, "ellipse": 4, "text": 2}
)

// validObject checks an object a client adds and thins a long stroke; it
// returns a message naming the field at fault.
func validObject(o *Object) string {
	n, ok := tools[o.Tool]
	switch {
	case !objectID.MatchString(o.ID):
		return "object.id must be 1-32 letters, digits, '-' or '_'."
	case !pageID.MatchString(o.Page):
		return "object.page must be p1-p999 or pdf:<file>:<page>."
	case !ok:
		return "object.tool must be pen, highlighter, line, arrow, rect, ellipse or text."
	case !colorRe.MatchString(o.Color):
		return "object.color must be #rrggbb."
	case o.Width < 1 || o.Width > 64:
		return "object.width must be 1-64."
	case len(o.Points)%2 != 0 || len(o.Points) == 0:
		return "object.points must be pairs of x, y."
	case n > 0 && len(o.Points) != n:
		return "object.points must be two corners for " + o.Tool + ", one point for text."
	case !utf8.ValidString(o.Text) || utf8.RuneCountInString(o.Text) > maxTextRunes:
		return "object.text must be valid text of at most 2000 characters."
	case o.Tool == "text" && (strings.TrimSpace(o.Text) == "" || o.Size < 8 || o.Size > 200):
		return "a text object needs text and a size of 8-200."
	}
	for i, v := range o.Points {
		limit := BoardWidth
		if i%2 == 1 {
			limit = BoardHeight
		}
		if v < -limit || v > 2*limit {
			return "object.points must lie on or near the page (1600 x 900)."
		}
	}
	if o.Tool != "text" {
		o.Text, o.Size = "", 0
	}
	if len(o.Points) > 2*MaxPoints {
		o.Points = thin(o.Points, MaxPoints)
	}
	return ""
}

// thin keeps n points of a stroke, evenly spaced, the first and last
// included.
func thin(pts []int, n int) []int {
	count := len(pts) / 2
	out := make([]int, 0, 2*n)
	for i := range n {
		j := i * (count - 1) / (n - 1)
		out = append(out, pts[2*j], pts[2*j+1])
	}
	return out
}

// boardOp runs a client's board message.
func (r *Room) boardOp(c *Conn, u *user, raw boardMsg, fail func(code, msg string)) {
	b := r.board
	switch raw.Op {
	case "progress", "laser":
		if !r.can(u, permDraw) {
			return // live traffic: refusing each frame would flood the client
		}
		live := raw
		live.Object, live.IDs = nil, nil
		data, _ := json.Marshal(struct {
			Type string `json:"type"`
			By   string `json:"by"`
			boardMsg
		}{"board-live", u.id, live})
		for _, oc := range r.conns {
			if oc != c {
				oc.push(data)
			}
		}
		return
	case "page":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher turns the board's pages.")
			return
		}
		if !pageID.MatchString(raw.Page) {
			fail(ErrInvalid, "page must be p1-p999 or pdf:<file>:<page>.")
			return
		}
		if _, ok := b.pages[raw.Page]; !ok && len(b.order) >= MaxPages {
			fail(ErrInvalid, "The board has as many pages as it can hold (100).")
			return
		}
		b.get(raw.Page)
		b.page = raw.Page
		r.sitting.BoardPage = raw.Page
		r.saveSitting()
		r.broadcast(eventMsg{Kind: "board", boardMsg: &boardMsg{Op: "page", Page: raw.Page}}, nil, nil)
		return
	}
	if !r.can(u, permDraw) {
		fail(ErrForbidden, "The teacher has not let you draw.")
		return
	}
	switch raw.Op {
	case "add":
		o := raw.Object
		if o == nil {
			fail(ErrInvalid, "object is required.")
			return
		}
		if msg := validObject(o); msg != "" {
			fail(ErrInvalid, msg)
			return
		}
		if r.findObject(o.ID) != nil {
			fail(ErrInvalid, "object.id is already used on this board.")
			return
		}
		if _, ok := b.pages[o.Page]; !ok && len(b.order) >= MaxPages {
			fail(ErrInvalid, "The board has as many pages as it can hold (100).")
			return
		}
		if len(b.get(o.Page).objs) >= MaxPageObjects {
			fail(ErrInvalid, "This page is full (20,000 objects). Clear it or use another page.")
			return
		}
		o.By = u.id
		r.applyAdd(u, []*Object{o}, true)
	case "move":
		p := b.pages[raw.Page]
		ids := r.ownedIDs(u, p, raw.IDs)
		if len(ids) == 0 || raw.DX < -2*BoardWidth || raw.DX > 2*BoardWidth || raw.DY < -2*BoardHeight || raw.DY > 2*BoardHeight {
			fail(ErrInvalid, "move needs ids of objects you may move on that page, and dx, dy within the page.")
			return
		}
		r.applyMove(u, raw.Page, ids, raw.DX, raw.DY, true)
	case "erase":
		p := b.pages[raw.Page]
		ids := r.ownedIDs(u, p, raw.IDs)
		if len(ids) == 0 {
			fail(ErrInvalid, "erase needs ids of objects you may erase on that page.")
			return
		}
		r.applyErase(u, raw.Page, ids, "erase", true)
	case "clear":
		if !r.can(u, permOp) {
			fail(ErrForbidden, "Only the teacher clears a page.")
			return
		}
		p := b.pages[raw.Page]
		if p == nil {
			fail(ErrInvalid, "There is no such page.")
			return
		}
		ids := make([]string, 0, len(p.objs))
		for _, o := range p.objs {
			ids = append(ids, o.ID)
		}
		r.applyErase(u, raw.Page, ids, "clear", true)
	case "undo", "redo":
		r.undoRedo(u, raw.Op, fail)
	default:
		fail(ErrInvalid, "op must be add, move, erase, clear, undo, redo, page, progress or laser.")
	}
}

// ownedIDs keeps the ids on p that u may change: all for the teacher, a
// student's own for a student.
func (r *Room) ownedIDs(u *user, p *page, ids []string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if i, ok := p.idx[id]; ok && (u.teacher || p.objs[i].By == u.id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (r *Room) findObject(id string) *Object {
	for _, p := range r.board.pages {
		if i, ok := p.idx[id]; ok {
			return p.objs[i]
		}
	}
	return nil
}

// record pushes a change on u's undo stack (and forgets what u could
// redo) when fresh, i.e. not itself an undo or redo.
func (r *Room) recordChange(u *user, ch change, fresh bool) {
	if !fresh {
		return
	}
	st := append(r.board.undo[u.id], ch)
	if len(st) > MaxUndo {
		st = st[len(st)-MaxUndo:]
	}
	r.board.undo[u.id] = st
	r.board.redo[u.id] = nil
}

func (r *Room) applyAdd(u *user, objs []*Object, fresh bool) {
	seq := r.seq + 1
	p := r.board.get(objs[0].Page)
	rows := make([]lms.BoardObject, 0, len(objs))
	for _, o := range objs {
		if o.ord == 0 {
			o.ord = seq
		}
		o.Seq = seq
		rows = append(rows, boardRow(o))
	}
	if fresh {
		p.add(objs[0]) // a new object is drawn last
	} else {
		p.restore(objs) // back in its old place
	}
	r.storeBoard(func(ctx context.Context) error {
		return r.hub.Store.SaveBoardObjects(ctx, r.key.Domain, r.key.Class, r.key.Sitting, rows)
	})
	r.recordChange(u, change{op: "add", page: objs[0].Page, objects: objs}, fresh)
	if len(objs) == 1 && fresh {
		r.broadcast(eventMsg{Kind: "board", boardMsg: &boardMsg{Op: "add", Object: objs[0]}}, nil, nil)
		return
	}
	r.broadcast(eventMsg{Kind: "board", boardMsg: &boardMsg{Op: "restore", Page: objs[0].Page}, Objects: objs}, nil, nil)
}

func (r *Room) applyMove(u *user, pageID string, ids []string, dx, dy int, fresh bool) {
	p := r.board.pages[pageID]
	seq := r.seq + 1
	var rows []lms.BoardObject
	for _, id := range ids {
		if i, ok := p.idx[id]; ok {
			o := p.objs[i]
			for j := range o.Points {
				if j%2 == 0 {
					o.Points[j] += dx
				} else {
					o.Points[j] += dy
				}
			}
			o.Seq = seq
			rows = append(rows, boardRow(o))
		}
	}
	r.storeBoard(func(ctx context.Context) error {
		return r.hub.Store.SaveBoardObjects(ctx, r.key.Domain, r.key.Class, r.key.Sitting, rows)
	})
	r.recordChange(u, change{op: "move", page: pageID, ids: ids, dx: dx, dy: dy}, fresh)
	r.broadcast(eventMsg{Kind: "board", boardMsg: &boardMsg{Op: "move", Page: pageID, IDs: ids, DX: dx, DY: dy}, By: u.id}, nil, nil)
}

func (r *Room) applyErase(u *user, pageID string, ids []string, op string, fresh bool) {
	removed := r.board.pages[pageID].remove(ids)
	r.storeBoard(func(ctx context.Context) error {
		if op == "clear" {
			return r.hub.Store.ClearBoardPage(ctx, r.key.Domain, r.key.Class, r.key.Sitting, pageID)
		}
		return r.hub.Store.DeleteBoardObjects(ctx, r.key.Domain, r.key.Class, r.key.Sitting, ids)
	})
	r.recordChange(u, change{op: op, page: pageID, objects: removed}, fresh)
	msg := &boardMsg{Op: op, Page: pageID}
	if op == "erase" {
		msg.IDs = ids
	}
	r.broadcast(eventMsg{Kind: "board", boardMsg: msg, By: u.id}, nil, nil)
}

// undoRedo undoes (or redoes) u's last change that can still be undone:
// objects another user has since erased are skipped.
func (r *Room) undoRedo(u *user, op string, fail func(code, msg string)) {
	from, to := r.board.undo, r.board.redo
	if op == "redo" {
		from, to = r.board.redo, r.board.undo
	}
	st := from[u.id]
	if len(st) == 0 {
		fail(ErrInvalid, "Nothing to "+op+".")
		return
	}
	ch := st[len(st)-1]
	from[u.id] = st[:len(st)-1]
	p := r.board.pages[ch.page]
	undoing := op == "undo"
	switch {
	case ch.op == "add" && undoing, (ch.op == "erase" || ch.op == "clear") && !undoing:
		ids := presentIDs(p, ch.objects)
		if len(ids) > 0 {
			r.applyErase(u, ch.page, ids, "erase", false)
		}
	case ch.op == "add" && !undoing, (ch.op == "erase" || ch.op == "clear") && undoing:
		var back []*Object
		for _, o := range ch.objects {
			if r.findObject(o.ID) == nil {
				back = append(back, o)
			}
		}
		if len(back) > 0 {
			r.applyAdd(u, back, false)
		}
	case ch.op == "move":
		dx, dy := ch.dx, ch.dy
		if undoing {
			dx, dy = -dx, -dy
		}
		ids := r.ownedIDs(u, p, ch.ids)
		if len(ids) > 0 {
			r.applyMove(u, ch.page, ids, dx, dy, false)
		}
	}
	to[u.id] = append(to[u.id], ch)
}

func presentIDs(p *page, objs []*Object) []string {
	var ids []string
	if p == nil {
		return nil
	}
	for _, o := range objs {
		if _, ok := p.idx[o.ID]; ok {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

func boardRow(o *Object) lms.BoardObject {
	data, _ := json.Marshal(o)
	return lms.BoardObject{ID: o.ID, Page: o.Page, Ord: o.ord, Data: data}
}

// storeBoard writes a board change; a failure is logged (the room goes
// on with its memory, which late joiners still get).
func (r *Room) storeBoard(fn func(ctx context.Context) error) {
	if err := fn(context.Background()); err != nil {
		r.hub.logger().Error("store board", "class", r.key.Class, "sitting", r.key.Sitting, "err", err)
	}
}

// loadBoard reads the sitting's board from the store.
func (r *Room) loadBoard(ctx context.Context) error {
	r.board = newBoard()
	rows, err := r.hub.Store.BoardObjects(ctx, r.key.Domain, r.key.Class, r.key.Sitting)
	if err != nil {
		return err
	}
	for _, row := range rows {
		o := &Object{}
		if err := json.Unmarshal(row.Data, o); err != nil {
			continue
		}
		o.ord = row.Ord
		r.board.get(o.Page).add(o)
	}
	if r.sitting.BoardPage != "" {
		r.board.page = r.sitting.BoardPage
	}
	r.board.get(r.board.page)
	return nil
}
