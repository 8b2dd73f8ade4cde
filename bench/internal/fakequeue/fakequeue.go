// Package fakequeue is test scaffolding for the load-test runner's own
// tests, and nothing else: an in-process stand-in for the few endpoints of
// the HTTP contract the runner drives (admin create, get, patch and delete
// of a site; join; status; the room WebSocket). It keeps no admission line
// and enforces none of the room's rules; it must never be served outside a
// test.
package fakequeue

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Server is a running fake. Close it when the test ends.
type Server struct {
	*httptest.Server
	token string

	mu     sync.Mutex // guards everything below
	nextID int
	sites  map[string]*site // by id
	bySlug map[string]*site
	// Deleted lists the slugs of deleted sites, in order.
	deleted []string
	// created lists the slugs of created sites, in order.
	created  []string
	joins    int
	statuses int
	patches  int
}

type site struct {
	fields map[string]any
	slug   string
	issued int
	conns  map[*socket]struct{}
}

type socket struct {
	mu sync.Mutex // guards writes to c
	c  *websocket.Conn
}

// New starts a fake on 127.0.0.1 that accepts token as the admin token.
func New(token string) *Server {
	s := &Server{token: token, sites: map[string]*site{}, bySlug: map[string]*site{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/admin/queue/sites", s.admin(s.handleSiteCreate))
	mux.HandleFunc("GET /api/admin/queue/sites/{id}", s.admin(s.handleSiteGet))
	mux.HandleFunc("PATCH /api/admin/queue/sites/{id}", s.admin(s.handleSiteUpdate))
	mux.HandleFunc("DELETE /api/admin/queue/sites/{id}", s.admin(s.handleSiteDelete))
	mux.HandleFunc("POST /queue/{slug}/join", s.handleJoin)
	mux.HandleFunc("GET /queue/{slug}/status", s.handleStatus)
	mux.HandleFunc("GET /queue/{slug}/ws", s.handleWS)
	s.Server = httptest.NewServer(mux)
	return s
}

// AddSite creates a site directly, as if an operator had made it, and
// returns its id.
func (s *Server) AddSite(slug string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(map[string]any{"slug": slug, "name": "Existing", "ratePerMinute": 60}).fields["id"].(string)
}

func (s *Server) addLocked(fields map[string]any) *site {
	s.nextID++
	id := "site-" + strconv.Itoa(s.nextID)
	fields["id"] = id
	fields["active"] = true
	fields["createdAt"] = time.Now().UTC().Format(time.RFC3339)
	st := &site{fields: fields, slug: fields["slug"].(string), conns: map[*socket]struct{}{}}
	s.sites[id] = st
	s.bySlug[st.slug] = st
	return st
}

// Created returns the slugs of the sites created through the admin API.
func (s *Server) Created() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.created...)
}

// Deleted returns the slugs of the sites deleted through the admin API.
func (s *Server) Deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deleted...)
}

// Counts returns how many joins, status answers and patches were served.
func (s *Server) Counts() (joins, statuses, patches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.joins, s.statuses, s.patches
}

// Sites returns the number of sites that exist now.
func (s *Server) Sites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sites)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": code, "message": msg})
}

func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			writeError(w, http.StatusUnauthorized, "unauthorized", "bad admin token")
			return
		}
		h(w, r)
	}
}

func (s *Server) handleSiteCreate(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "malformed JSON")
		return
	}
	slug, _ := in["slug"].(string)
	if slug == "" {
		writeError(w, http.StatusUnprocessableEntity, "invalid_slug", "slug is required")
		return
	}
	if rate, _ := in["ratePerMinute"].(float64); rate < 1 {
		writeError(w, http.StatusUnprocessableEntity, "invalid_rate", "ratePerMinute must be at least 1")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.bySlug[slug]; taken {
		writeError(w, http.StatusConflict, "slug_taken", "slug is taken")
		return
	}
	st := s.addLocked(in)
	s.created = append(s.created, slug)
	writeJSON(w, http.StatusCreated, map[string]any{"site": st.fields, "secret": "s3cret"})
}

func (s *Server) handleSiteGet(w http.ResponseWriter, r *http.Request) {
	st := s.lockedSite(w, r)
	if st == nil {
		return
	}
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, st.fields)
}

func (s *Server) handleSiteUpdate(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "malformed JSON")
		return
	}
	if _, ok := in["slug"]; ok {
		writeError(w, http.StatusUnprocessableEntity, "invalid_slug", "slug cannot be changed")
		return
	}
	rate, _ := in["ratePerMinute"].(float64)
	if rate < 1 {
		writeError(w, http.StatusUnprocessableEntity, "invalid_rate", "ratePerMinute must be at least 1")
		return
	}
	st := s.lockedSite(w, r)
	if st == nil {
		return
	}
	if in["name"] != st.fields["name"] {
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "invalid_name", "the whole configuration is expected")
		return
	}
	s.patches++
	st.fields["ratePerMinute"] = rate
	frame := frameLocked(st)
	conns := make([]*socket, 0, len(st.conns))
	for c := range st.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.write(frame)
	}
	writeJSON(w, http.StatusOK, st.snapshot(&s.mu))
}

func (st *site) snapshot(mu *sync.Mutex) map[string]any {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]any, len(st.fields))
	for k, v := range st.fields {
		out[k] = v
	}
	return out
}

func (s *Server) handleSiteDelete(w http.ResponseWriter, r *http.Request) {
	st := s.lockedSite(w, r)
	if st == nil {
		return
	}
	delete(s.sites, r.PathValue("id"))
	delete(s.bySlug, st.slug)
	s.deleted = append(s.deleted, st.slug)
	conns := st.conns
	st.conns = nil
	s.mu.Unlock()
	for c := range conns {
		_ = c.c.Close()
	}
	w.WriteHeader(http.StatusNoContent)
}

// lockedSite locks s and returns the site the request names: by its id,
// or by its slug on a room's path. For an unknown one it answers 404,
// unlocks s and returns nil.
func (s *Server) lockedSite(w http.ResponseWriter, r *http.Request) *site {
	s.mu.Lock()
	st, unknown := s.sites[r.PathValue("id")], "no such site"
	if slug := r.PathValue("slug"); slug != "" {
		st, unknown = s.bySlug[slug], "unknown room"
	}
	if st == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", unknown)
	}
	return st
}

func ticketFor(slug string, n int) string { return fmt.Sprintf("T.%s.%d", slug, n) }

// numberOf checks a ticket against the room and returns its number.
func numberOf(st *site, ticket string) (int, bool) {
	rest, ok := strings.CutPrefix(ticket, "T."+st.slug+".")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 1 && n <= st.issued
}

func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	st := s.lockedSite(w, r)
	if st == nil {
		return
	}
	st.issued++
	s.joins++
	n := st.issued
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"queue": st.slug, "name": "Load test", "number": n, "serving": 0, "ahead": n - 1,
		"admitted": false, "estimatedWaitSeconds": n, "retryAfterSeconds": 5, "ticket": ticketFor(st.slug, n),
	})
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.bySlug[r.PathValue("slug")]
	var n int
	ok := st != nil
	if ok {
		n, ok = numberOf(st, r.URL.Query().Get("ticket"))
	}
	if ok {
		s.statuses++
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown room or ticket")
		return
	}
	w.Header().Set("Retry-After", "5")
	writeJSON(w, http.StatusOK, map[string]any{
		"queue": st.slug, "name": "Load test", "number": n, "serving": 0, "ahead": n - 1,
		"admitted": false, "estimatedWaitSeconds": n, "retryAfterSeconds": 5, "active": true,
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.bySlug[r.PathValue("slug")]
	ok := st != nil
	if ok {
		_, ok = numberOf(st, r.URL.Query().Get("ticket"))
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown room or ticket")
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	sock := &socket{c: c}
	s.mu.Lock()
	if st.conns == nil { // deleted meanwhile
		s.mu.Unlock()
		_ = c.Close()
		return
	}
	st.conns[sock] = struct{}{}
	frame := frameLocked(st)
	s.mu.Unlock()
	sock.write(frame)
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			break
		}
	}
	s.mu.Lock()
	delete(st.conns, sock)
	s.mu.Unlock()
	_ = c.Close()
}

func frameLocked(st *site) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "room", "serving": 0, "rate": st.fields["ratePerMinute"], "waiting": st.issued,
		"paused": false, "serverTime": time.Now().UTC().Format(time.RFC3339Nano),
	})
	return b
}

func (c *socket) write(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.c.WriteMessage(websocket.TextMessage, frame)
}
