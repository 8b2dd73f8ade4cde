package web

// ModeSentence is the page's sentence, in lang (one of Languages;
// anything else is English), for a room in mode: sold out, in maintenance
// or with admission on hold. It is "" for the modes that need none.
func ModeSentence(lang, mode string) string {
	_, t := words(lang)
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
