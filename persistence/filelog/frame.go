package filelog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// A segment file starts with segmentMagic and then holds frames back to
// back. A frame is the unit of durability and of checking: every Append
// writes exactly one frame, so the records of one call are all there or all
// gone after a crash.
//
//	frame  = length u32 | crc u32 | body            (little endian)
//	body   = kind u8 | stream-len uvarint | stream | first u64 | count u32 | record…
//	record = data-len uvarint | data
//
// length is the size of body; crc is the CRC-32C (Castagnoli) of the four
// length bytes followed by body, so a damaged length is caught as surely as
// damaged data. Offsets of a frame's records are first, first+1, …
const (
	segmentMagic = "AQLOG\x00\x01\n"
	headerSize   = int64(len(segmentMagic))
	frameHeader  = 8
	kindRecords  = 1

	// maxFrame bounds the encoded size of one Append (all its records and
	// their framing). A length above it in a segment is damage, not data,
	// and is never allocated.
	maxFrame = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameSize is the encoded size of a frame, header included.
func frameSize(stream string, data [][]byte) int {
	n := frameHeader + 1 + uvarintLen(uint64(len(stream))) + len(stream) + 8 + 4
	for _, d := range data {
		n += uvarintLen(uint64(len(d))) + len(d)
	}
	return n
}

// appendFrame encodes a frame at the end of buf. size must be
// frameSize(stream, data).
func appendFrame(buf []byte, size int, stream string, first int64, data [][]byte) []byte {
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(size-frameHeader))
	buf = append(buf, 0, 0, 0, 0) // crc, filled in below
	buf = append(buf, kindRecords)
	buf = binary.AppendUvarint(buf, uint64(len(stream)))
	buf = append(buf, stream...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(first))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(data)))
	for _, d := range data {
		buf = binary.AppendUvarint(buf, uint64(len(d)))
		buf = append(buf, d...)
	}
	f := buf[start:]
	crc := crc32.Update(crc32.Checksum(f[:4], castagnoli), castagnoli, f[frameHeader:])
	binary.LittleEndian.PutUint32(f[4:8], crc)
	return buf
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

var (
	errShort  = errors.New("short frame")
	errLength = errors.New("frame length out of range")
	errCRC    = errors.New("frame checksum mismatch")
	errShape  = errors.New("malformed frame body")
)

// frameBodyLen reads the body length from a frame header and checks it is
// plausible.
func frameBodyLen(hdr []byte) (int, error) {
	n := binary.LittleEndian.Uint32(hdr[:4])
	// The smallest body is kind, an empty stream name, first and count.
	if n < 1+1+8+4 || n > maxFrame {
		return 0, errLength
	}
	return int(n), nil
}

// checkCRC reports whether the frame (header and body) carries its checksum.
func checkCRC(f []byte) error {
	want := binary.LittleEndian.Uint32(f[4:8])
	if crc32.Update(crc32.Checksum(f[:4], castagnoli), castagnoli, f[frameHeader:]) != want {
		return errCRC
	}
	return nil
}

// frameBody is a decoded, checked frame body.
type frameBody struct {
	stream  []byte
	first   int64
	count   int
	records []byte // count records, exactly
}

// parseBody decodes a body whose checksum has been verified and checks its
// shape: a known kind, a non-empty stream, count records that exactly fill
// the rest. It never panics, whatever the bytes.
func parseBody(body []byte) (frameBody, error) {
	var fb frameBody
	if len(body) < 1 || body[0] != kindRecords {
		return fb, errShape
	}
	p := body[1:]
	sl, n := binary.Uvarint(p)
	if n <= 0 || sl == 0 || sl > uint64(len(p)-n) {
		return fb, errShape
	}
	fb.stream = p[n : n+int(sl)]
	p = p[n+int(sl):]
	if len(p) < 12 {
		return fb, errShape
	}
	first := binary.LittleEndian.Uint64(p)
	count := binary.LittleEndian.Uint32(p[8:])
	if first > 1<<62 || count == 0 {
		return fb, errShape
	}
	fb.first, fb.count, fb.records = int64(first), int(count), p[12:]
	// Walk the records once so that every later walk can trust the shape.
	p = fb.records
	for i := 0; i < fb.count; i++ {
		d, err := nextRecord(&p)
		if err != nil {
			return fb, err
		}
		_ = d
	}
	if len(p) != 0 {
		return fb, errShape
	}
	return fb, nil
}

// nextRecord takes one record from the front of *p. The returned slice has
// its capacity capped, so a caller that appends to it cannot overwrite the
// next record.
func nextRecord(p *[]byte) ([]byte, error) {
	b := *p
	dl, n := binary.Uvarint(b)
	if n <= 0 || dl > uint64(len(b)-n) {
		return nil, errShape
	}
	end := n + int(dl)
	*p = b[end:]
	return b[n:end:end], nil
}
