package room

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// A ticket binds a waiting number to its room and to the visitor who drew
// it: the join answer carries it, and status, token, heartbeat and WebSocket
// take it, so nobody can claim number 1 by typing it (DESIGN.md invariant 9).
// It is base64url(number as 8 bytes ‖ first 16 bytes of
// HMAC-SHA256(ticketKey, "ticket" ‖ roomID ‖ number)).

const ticketMACLen = 16

// SignTicket returns the ticket for number n of room roomID.
func SignTicket(key []byte, roomID string, n uint64) string {
	var buf [8 + ticketMACLen]byte
	binary.BigEndian.PutUint64(buf[:8], n)
	copy(buf[8:], ticketMAC(key, roomID, n))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// ParseTicket returns the number a ticket stands for, and false when the
// ticket was not issued by this room (checked in constant time).
func ParseTicket(key []byte, roomID, ticket string) (uint64, bool) {
	if len(ticket) != base64.RawURLEncoding.EncodedLen(8+ticketMACLen) {
		return 0, false
	}
	var buf [8 + ticketMACLen]byte
	if n, err := base64.RawURLEncoding.Decode(buf[:], []byte(ticket)); err != nil || n != len(buf) {
		return 0, false
	}
	n := binary.BigEndian.Uint64(buf[:8])
	if n == 0 || !hmac.Equal(buf[8:], ticketMAC(key, roomID, n)) {
		return 0, false
	}
	return n, true
}

func ticketMAC(key []byte, roomID string, n uint64) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("ticket\x00"))
	m.Write([]byte(roomID))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], n)
	m.Write(b[:])
	return m.Sum(nil)[:ticketMACLen]
}

// SubKey derives a key for another purpose (proof-of-work challenges) from
// the ticket key, so one sealed room key serves both.
func SubKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("subkey\x00" + purpose))
	return m.Sum(nil)
}
