package web

// ModeSentence is the page's sentence, in lang ("de" or "en"; anything
// else is English), for a room in mode: sold out, in maintenance or with
// admission on hold. It is "" for the modes that need none.
func ModeSentence(lang, mode string) string {
	t, ok := catalog[lang]
	if !ok {
		t = catalog["en"]
	}
	switch mode {
	case "soldOut":
		return t.SoldOutDefault
	case "maintenance":
		return t.MaintenanceDefault
	case "queueAll":
		return t.QueueAllDefault
	}
	return ""
}
