package filelog

import (
	"encoding/binary"
	"sort"
	"unsafe"
)

// blockFrames is the most frames one index block describes. A lookup finds
// its block by binary search and then decodes at most this many entries.
const blockFrames = 64

// index is where one stream's durable frames lie. It is sparse: one block
// entry (56 bytes) per run of up to blockFrames frames of one segment, and
// inside it each frame as three uvarints (the gap since the previous frame
// of the run ended, its size, its record count), about 5 bytes a frame
// against 24 for a plain table. Its memory grows with the frames the log
// keeps; retention drops whole blocks with their segments.
//
// Concurrency: the log's mu guards index. Replay takes a view under mu and
// reads it after unlocking: sealed blocks never change, and the open block
// only grows past the length the view saw.
type index struct {
	blocks []block // sealed, in offset order
	open   block   // being filled; n == 0 when empty
}

// block describes a run of frames of one stream in one segment.
type block struct {
	first int64  // offset of the first record of the first frame
	next  int64  // offset after the last record of the last frame
	seg   uint32 // segment of every frame of the block
	pos   uint32 // position of the first frame
	end   uint32 // end of the last frame
	bytes uint32 // sum of the frames' sizes
	n     uint16 // frames
	enc   []byte // per frame: uvarint gap, uvarint size, uvarint count
}

// add appends a frame, which must follow every frame already indexed.
func (x *index) add(f frame) {
	o := &x.open
	if o.n > 0 && (o.seg != f.seg || o.n == blockFrames || f.pos < o.end) {
		x.seal()
	}
	if o.n == 0 {
		*o = block{first: f.first, next: f.first, seg: f.seg, pos: f.pos, end: f.pos}
	}
	o.enc = binary.AppendUvarint(o.enc, uint64(f.pos-o.end))
	o.enc = binary.AppendUvarint(o.enc, uint64(f.size))
	o.enc = binary.AppendUvarint(o.enc, uint64(f.count))
	o.next = f.first + int64(f.count)
	o.end = f.pos + f.size
	o.bytes += f.size
	o.n++
}

// seal moves the open block to the sealed ones, its encoding copied to a
// buffer of its exact size.
func (x *index) seal() {
	b := x.open
	b.enc = append(make([]byte, 0, len(b.enc)), b.enc...)
	x.blocks = append(x.blocks, b)
	x.open = block{}
}

// view is a read-only copy of an index, safe to use without the lock. It
// shares the sealed blocks (appending past their length never disturbs a
// reader of the shorter slice) and copies the open block's header (its n
// and the length of its encoding as they are now), so taking one costs the
// same whatever the stream's length.
type view struct {
	sealed []block
	open   block // n == 0 when there is none
}

// viewLocked returns the index as it stands.
func (x *index) viewLocked() view { return view{sealed: x.blocks, open: x.open} }

// len is the number of blocks in v.
func (v *view) len() int {
	if v.open.n > 0 {
		return len(v.sealed) + 1
	}
	return len(v.sealed)
}

// at is block i of v.
func (v *view) at(i int) *block {
	if i < len(v.sealed) {
		return &v.sealed[i]
	}
	return &v.open
}

// from returns the position in v of the first block holding an offset
// above after.
func (v *view) from(after int64) int {
	return sort.Search(v.len(), func(i int) bool { return v.at(i).next-1 > after })
}

// frames decodes block b's frames into buf.
func (b *block) frames(buf []frame) []frame {
	buf = buf[:0]
	p, pos, first := b.enc, b.pos, b.first
	for i := 0; i < int(b.n); i++ {
		gap, n1 := binary.Uvarint(p)
		size, n2 := binary.Uvarint(p[n1:])
		count, n3 := binary.Uvarint(p[n1+n2:])
		p = p[n1+n2+n3:]
		pos += uint32(gap)
		buf = append(buf, frame{first: first, seg: b.seg, pos: pos, size: uint32(size), count: uint32(count)})
		pos += uint32(size)
		first += int64(count)
	}
	return buf
}

// lookup returns the frame holding offset off, for tests and benchmarks.
func (v view) lookup(off int64, buf []frame) (frame, bool) {
	i := v.from(off - 1)
	if i == v.len() || v.at(i).first > off {
		return frame{}, false
	}
	fs := v.at(i).frames(buf)
	j := sort.Search(len(fs), func(j int) bool { return fs[j].first+int64(fs[j].count) > off })
	return fs[j], true
}

// memory is what the index holds in memory, in bytes.
func (x *index) memory() int64 {
	n := int64(cap(x.blocks))*int64(unsafe.Sizeof(block{})) + int64(cap(x.open.enc))
	for i := range x.blocks {
		n += int64(cap(x.blocks[i].enc))
	}
	return n
}

// frameCount is how many frames the index describes.
func (x *index) frameCount() int {
	n := int(x.open.n)
	for i := range x.blocks {
		n += int(x.blocks[i].n)
	}
	return n
}

// replaceSeg puts frames (in offset order) in place of the stream's frames
// in segment seg: retention rewrote that segment with only them. It builds
// new slices, so views taken before stay as they were.
func (x *index) replaceSeg(seg uint32, frames []frame) {
	hadOpen := x.open.n > 0
	all := x.blocks[:len(x.blocks):len(x.blocks)]
	if hadOpen {
		all = append(all, x.open)
	}
	at := 0
	for at < len(all) && all[at].seg != seg {
		at++
	}
	if at == len(all) {
		return
	}
	end := at
	for end < len(all) && all[end].seg == seg {
		end++
	}
	var fresh index
	for _, f := range frames {
		fresh.add(f)
	}
	if fresh.open.n > 0 {
		fresh.seal()
	}
	out := append(append(append([]block(nil), all[:at]...), fresh.blocks...), all[end:]...)
	x.blocks, x.open = out, block{}
	if hadOpen && end < len(all) {
		// The open block lies after the segment: it stays open.
		x.blocks, x.open = out[:len(out)-1], out[len(out)-1]
	}
}
