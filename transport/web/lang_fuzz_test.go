package web

import "testing"

// FuzzLang reads arbitrary Accept-Language headers. Invariants: the answer
// is "de" or "en", and an entry that is not acceptable (q=0) or whose q is
// malformed changes nothing, wherever it is added.
func FuzzLang(f *testing.F) {
	for _, s := range []string{"", "de", "de-AT,en;q=0.5", "en,de;q=0.9", "fr, de;q=0.8", "*", "de;q=0", "de;q=1.5", "de;q=x",
		"de;q=nan", "de;q=NaN,en", "de;q=Inf", ";;;,,,", "DE-de", "de;q=0.5;q=0.9", "de;q=0.9,fr;q=0.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := Lang(h)
		if got != "de" && got != "en" {
			t.Fatalf("Lang(%q) = %q", h, got)
		}
		for _, extra := range []string{"zz;q=0", "zz;q=nan", "zz;q=-1", "zz;q=2", "zz;q=x"} {
			if l := Lang(h + "," + extra); l != got {
				t.Fatalf("Lang(%q) = %q, but with %q added %q", h, got, extra, l)
			}
			if l := Lang(extra + "," + h); l != got {
				t.Fatalf("Lang(%q) = %q, but with %q before it %q", h, got, extra, l)
			}
		}
	})
}

// FuzzPageLang reads arbitrary choices and Accept-Language headers.
// Invariants: the answer is always one of Languages; a known choice wins
// over everything; an entry for a language without a catalogue changes
// nothing.
func FuzzPageLang(f *testing.F) {
	for _, h := range []string{"", "fr-CH, fr;q=0.9", "sv, de;q=0.8", "ar-EG", "ja;q=0.5, pt-BR", "*", "x;q=abc"} {
		f.Add("", h)
		f.Add("ar", h)
	}
	f.Fuzz(func(t *testing.T, chosen, h string) {
		got := PageLang(chosen, "", h)
		if !Known(got) {
			t.Fatalf("PageLang(%q, %q) = %q, not a page language", chosen, h, got)
		}
		if Known(chosen) && got != chosen {
			t.Fatalf("PageLang(%q, %q) = %q, not the visitor's choice", chosen, h, got)
		}
		if l := PageLang(chosen, "", h+",sv;q=1"); l != got {
			t.Fatalf("PageLang with sv added: %q, without %q", l, got)
		}
	})
}
