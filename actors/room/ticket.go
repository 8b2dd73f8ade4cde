package room

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"maps"
	"sync"
	"sync/atomic"
)

// A ticket binds a waiting number to its room and to the visitor who drew
// it: the join answer carries it, and status, token, heartbeat and WebSocket
// take it, so nobody can claim number 1 by typing it (docs/architecture.md,
// invariant 9).
// It is base64url(number as 8 bytes ‖ first 16 bytes of
// HMAC-SHA256(ticketKey, "ticket" ‖ roomID ‖ number)).

const ticketMACLen = 16

// MinKeyLen is the shortest key the MAC functions of this package accept,
// in bytes. Rooms' ticket keys are 32 random bytes; an empty or short key
// is one that was never set or could not be opened, and proves nothing.
const MinKeyLen = 16

// ErrShortKey is returned for a key shorter than MinKeyLen.
var ErrShortKey = errors.New("MAC key missing or shorter than 16 bytes")

// CheckKey returns ErrShortKey for a key shorter than MinKeyLen.
func CheckKey(key []byte) error {
	if len(key) < MinKeyLen {
		return ErrShortKey
	}
	return nil
}

// SignTicket returns the ticket for number n of room roomID; it fails only
// for a short key (CheckKey).
func SignTicket(key []byte, roomID string, n uint64) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	var buf [8 + ticketMACLen]byte
	binary.BigEndian.PutUint64(buf[:8], n)
	p := ticketMACPool(key)
	m := p.Get().(*ticketMAC)
	copy(buf[8:], m.sum(roomID, n))
	p.Put(m)
	return base64.RawURLEncoding.EncodeToString(buf[:]), nil
}

// ErrBadTicket is returned for a ticket this room did not issue.
var ErrBadTicket = errors.New("ticket not issued by this room")

// ParseTicket returns the number a ticket stands for, or ErrBadTicket when
// the ticket was not issued by this room (checked in constant time). A
// short key (CheckKey) refuses every ticket with ErrShortKey.
func ParseTicket(key []byte, roomID, ticket string) (uint64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	if len(ticket) != base64.RawURLEncoding.EncodedLen(8+ticketMACLen) {
		return 0, ErrBadTicket
	}
	var buf [8 + ticketMACLen]byte
	if n, err := base64.RawURLEncoding.Decode(buf[:], []byte(ticket)); err != nil || n != len(buf) {
		return 0, ErrBadTicket
	}
	n := binary.BigEndian.Uint64(buf[:8])
	if n == 0 {
		return 0, ErrBadTicket
	}
	p := ticketMACPool(key)
	m := p.Get().(*ticketMAC)
	ok := hmac.Equal(buf[8:], m.sum(roomID, n))
	p.Put(m)
	if !ok {
		return 0, ErrBadTicket
	}
	return n, nil
}

// ticketMAC is an HMAC-SHA256 keyed with one room's ticket key, with room
// for its input and output, so that computing a ticket's MAC allocates
// nothing. Keying an HMAC costs two SHA-256 blocks and several allocations,
// more than the MAC of a ticket itself, so keyed states are kept in a pool
// per key and only reset between uses.
type ticketMAC struct {
	h   hash.Hash
	in  []byte
	out []byte
}

func (m *ticketMAC) sum(roomID string, n uint64) []byte {
	m.h.Reset()
	m.in = append(append(m.in[:0], "ticket\x00"...), roomID...)
	m.in = binary.BigEndian.AppendUint64(append(m.in, 0), n)
	m.h.Write(m.in)
	m.out = m.h.Sum(m.out[:0])
	return m.out[:ticketMACLen]
}

// ticketMACs pools keyed states by key. It holds copies of ticket keys,
// which front nodes and grains hold anyway; it is emptied when it reaches
// maxTicketMACKeys, so rotated and deleted rooms' keys do not pile up. The
// map is never written once published: every status request reads it, so
// reading takes no lock, and a new key (a room made or rotated) publishes a
// copy.
var ticketMACs struct {
	mu    sync.Mutex // serialises publishing
	pools atomic.Pointer[map[string]*sync.Pool]
}

const maxTicketMACKeys = 4096

func ticketMACPool(key []byte) *sync.Pool {
	if m := ticketMACs.pools.Load(); m != nil {
		if p := (*m)[string(key)]; p != nil {
			return p
		}
	}
	k := string(key)
	ticketMACs.mu.Lock()
	defer ticketMACs.mu.Unlock()
	old := map[string]*sync.Pool{}
	if m := ticketMACs.pools.Load(); m != nil {
		if p := (*m)[k]; p != nil {
			return p
		}
		if len(*m) < maxTicketMACKeys {
			old = *m
		}
	}
	p := &sync.Pool{New: func() any {
		return &ticketMAC{h: hmac.New(sha256.New, []byte(k)), in: make([]byte, 0, 64), out: make([]byte, 0, sha256.Size)}
	}}
	next := maps.Clone(old)
	next[k] = p
	ticketMACs.pools.Store(&next)
	return p
}

// SubKey derives a key for another purpose (proof-of-work challenges) from
// the ticket key, so one sealed room key serves both. It fails for a short
// key (CheckKey).
func SubKey(key []byte, purpose string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("subkey\x00" + purpose))
	return m.Sum(nil), nil
}
