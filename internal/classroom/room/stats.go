package room

// Participants returns how many users are present across every open
// room (a user with several devices counts once per room).
func (h *Hub) Participants() int {
	h.mu.Lock()
	rooms := make([]*Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	h.mu.Unlock()
	n := 0
	for _, r := range rooms {
		n += len(r.Participants())
	}
	return n
}
