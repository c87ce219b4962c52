package room

// Keys lists the open rooms.
func (h *Hub) Keys() []Key {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]Key, 0, len(h.rooms))
	for k := range h.rooms {
		keys = append(keys, k)
	}
	return keys
}

// Evict closes room k on this process without ending the class: its
// connections close as for a restart (clients reconnect, and find the room
// wherever it opens next). A node that lost a room's lease calls it.
func (h *Hub) Evict(k Key) {
	r := h.Room(k)
	if r == nil {
		return
	}
	if r.q.post(func() { r.shutdown("", "restart") }) {
		<-r.done
	}
}
