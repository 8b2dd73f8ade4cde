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
	return parseHoles(src, "{position}", "{waiting}", "{refresh}")
}

// parseHoles splits src at the placeholders names; any other brace is
// text.
func parseHoles(src []byte, names ...string) *page {
	p := &page{}
	for {
		i := bytes.IndexByte(src, '{')
		if i < 0 {
			break
		}
		matched := false
		for _, name := range names {
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

// write writes the page to b, each placeholder by hole.
func (p *page) write(b *bytes.Buffer, hole func(b *bytes.Buffer, name string)) {
	for i, part := range p.parts {
		b.Write(part)
		if i == len(p.holes) {
			break
		}
		if p.holes[i] != "" {
			hole(b, p.holes[i])
		}
	}
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
	p.write(&b, func(b *bytes.Buffer, name string) {
		switch name {
		case "{position}":
			b.WriteString(position)
		case "{waiting}":
			b.WriteString(num(waiting))
		case "{refresh}":
			b.WriteString(strconv.Itoa(refreshSeconds))
		}
	})
	return b.Bytes()
}
