package proxy

import (
	"bytes"
	_ "embed"
	"strconv"
)

//go:embed waiting.html
var builtinPage []byte

// page renders a waiting page: {position} (1 is next), {waiting}
// (everyone in this room's line) and {refresh} (seconds between checks).
// Unknown position and waiting (store unreachable, or a first request
// refused for its address's budget) show as "…"; a first request, whose
// place counts only when the visitor comes back, shows "about N ahead".
type page struct {
	parts [][]byte // text between placeholders
	holes []string // placeholder names, len(parts)-1
}

func parsePage(src []byte) *page {
	p := &page{}
	for {
		i := bytes.IndexByte(src, '{')
		if i < 0 {
			break
		}
		matched := false
		for _, name := range []string{"{position}", "{waiting}", "{refresh}"} {
			if bytes.HasPrefix(src[i:], []byte(name)) {
				p.parts = append(p.parts, src[:i])
				p.holes = append(p.holes, name)
				src = src[i+len(name):]
				matched = true
				break
			}
		}
		if !matched {
			p.parts = append(p.parts, src[:i+1])
			p.holes = append(p.holes, "")
			src = src[i+1:]
		}
	}
	p.parts = append(p.parts, src)
	return p
}

// render fills the page; position and waiting below 1 show as "…".
func (p *page) render(position, waiting, refreshSeconds int) []byte {
	return p.fill(num(position), waiting, refreshSeconds)
}

func num(n int) string {
	if n < 1 {
		return "…"
	}
	return strconv.Itoa(n)
}

// fill is render with the text of {position} given.
func (p *page) fill(position string, waiting, refreshSeconds int) []byte {
	var b bytes.Buffer
	for i, part := range p.parts {
		b.Write(part)
		if i == len(p.holes) {
			break
		}
		switch p.holes[i] {
		case "{position}":
			b.WriteString(position)
		case "{waiting}":
			b.WriteString(num(waiting))
		case "{refresh}":
			b.WriteString(strconv.Itoa(refreshSeconds))
		}
	}
	return b.Bytes()
}
