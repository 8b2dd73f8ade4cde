package web

// messages holds every visitor-facing sentence of the waiting room in one
// language. The template reads the static ones; all of them travel to the
// page's scripts in the page data, so the translations live in one place.
// Values with {n}, {h}, {m}, {ahead} and {wait} are filled in by i18n.js.
type messages struct {
	Title          string `json:"title"`
	Live           string `json:"live"`
	Joining        string `json:"joining"`
	Verifying      string `json:"verifying"`
	Waiting        string `json:"waiting"`
	PreQueue       string `json:"preQueue"`
	Drawing        string `json:"drawing"`
	Admitted       string `json:"admitted"`
	Forwarding     string `json:"forwarding"`
	Paused         string `json:"paused"`
	PausedDefault  string `json:"pausedDefault"`
	PausedJoin     string `json:"pausedJoin"`
	Reconnecting   string `json:"reconnecting"`
	Gone           string `json:"gone"`
	YourNumber     string `json:"yourNumber"`
	Position       string `json:"position"`
	Ahead          string `json:"ahead"`
	Admitting      string `json:"admitting"`
	NumberPrefix   string `json:"numberPrefix"`
	Wait           string `json:"wait"`
	WaitUnderOne   string `json:"waitUnderOne"`
	WaitOne        string `json:"waitOne"`
	WaitMinutes    string `json:"waitMinutes"`
	WaitHours      string `json:"waitHours"`
	WaitPaused     string `json:"waitPaused"`
	OpensIn        string `json:"opensIn"`
	DrawNote       string `json:"drawNote"`
	DrawSealed     string `json:"drawSealed"`
	DrawMade       string `json:"drawMade"`
	DrawDetails    string `json:"drawDetails"`
	DrawCheck      string `json:"drawCheck"`
	DrawChecking   string `json:"drawChecking"`
	DrawVerified   string `json:"drawVerified"`
	DrawFailed     string `json:"drawFailed"`
	DrawConsistent string `json:"drawConsistent"`
	DayOne         string `json:"dayOne"`
	DayMany        string `json:"dayMany"`
	KeepOpen       string `json:"keepOpen"`
	KeepPlace      string `json:"keepPlace"`
	Progress       string `json:"progress"`
	Announce       string `json:"announce"`
	Footer         string `json:"footer"`
	NotFoundTitle  string `json:"notFoundTitle"`
	NotFoundText   string `json:"notFoundText"`
	NoTargetTitle  string `json:"noTargetTitle"`
	NoTargetText   string `json:"noTargetText"`
	// TooManyCodes is the page of a browser over its address's budget
	// of bypass-code attempts.
	TooManyCodesTitle string `json:"tooManyCodesTitle"`
	TooManyCodesText  string `json:"tooManyCodesText"`
	NoScript          string `json:"noScript"`
	OldBrowser        string `json:"oldBrowser"`
	// The room's modes: the state line and the banner of each.
	SoldOut            string `json:"soldOut"`
	SoldOutDefault     string `json:"soldOutDefault"`
	Maintenance        string `json:"maintenance"`
	MaintenanceDefault string `json:"maintenanceDefault"`
	QueueAll           string `json:"queueAll"`
	QueueAllDefault    string `json:"queueAllDefault"`
	ModeLink           string `json:"modeLink"`
	// TurnTitle is the page title once the turn has come in a background
	// tab; NotifyMe offers the system notification.
	TurnTitle string `json:"turnTitle"`
	NotifyMe  string `json:"notifyMe"`
}

var catalog = map[string]messages{
	"en": {
		Title:              "Waiting room",
		Live:               "Live",
		Joining:            "Getting your waiting number…",
		Verifying:          "Verifying your browser…",
		Waiting:            "You are in the queue",
		PreQueue:           "Admission opens soon",
		Drawing:            "The draw is under way…",
		Admitted:           "It’s your turn!",
		Forwarding:         "It’s your turn – forwarding you now…",
		Paused:             "Admission is paused",
		PausedDefault:      "Admission has been paused for the moment. Your place in the queue is kept, and this page continues on its own as soon as admission resumes.",
		PausedJoin:         "Admission is paused at the moment, so no waiting numbers are being issued. This page tries again on its own and gives you your number as soon as admission resumes.",
		Reconnecting:       "Connection interrupted – trying again…",
		Gone:               "This waiting room is not available at the moment.",
		YourNumber:         "Your waiting number",
		Position:           "Your position after the draw",
		Ahead:              "Ahead of you",
		Admitting:          "Now admitting up to",
		NumberPrefix:       "No. ",
		Wait:               "Estimated wait",
		WaitUnderOne:       "less than a minute",
		WaitOne:            "about 1 minute",
		WaitMinutes:        "about {n} minutes",
		WaitHours:          "about {h} h {m} min",
		WaitPaused:         "on hold while paused",
		OpensIn:            "Admission opens in",
		DrawNote:           "At the opening, the order of everyone waiting is drawn at random – arriving early brings no advantage.",
		DrawSealed:         "The draw is sealed: {hash}",
		DrawMade:           "The draw is made: {hash}",
		DrawDetails:        "details",
		DrawCheck:          "Check the draw",
		DrawChecking:       "Checking the draw in your browser…",
		DrawVerified:       "Checked in your browser: position {position} follows from the published draw.",
		DrawFailed:         "The check failed: the published draw does not give your position.",
		DrawConsistent:     "Checked in your browser: the published draw is consistent with its commitment.",
		DayOne:             "1 day",
		DayMany:            "{n} days",
		KeepOpen:           "Keep this page open. It updates by itself and forwards you to the shop as soon as it is your turn.",
		KeepPlace:          "Reloading the page keeps your place.",
		Progress:           "Progress towards your turn",
		Announce:           "{ahead} ahead of you. Estimated wait: {wait}.",
		Footer:             "Virtual waiting room",
		NotFoundTitle:      "Waiting room not found",
		NotFoundText:       "There is no waiting room at this address. Please check the link you followed, or go back to the shop’s home page.",
		NoTargetTitle:      "This link leads nowhere yet",
		NoTargetText:       "This waiting room has no shop address to forward you to, so its entry link cannot be used. Please go to the shop’s home page; the organiser can fix the link by setting the room’s target URL.",
		TooManyCodesTitle:  "Too many code attempts",
		TooManyCodesText:   "Too many access codes were tried from your network just now, so this one was not checked. Please wait a minute and open your link again.",
		NoScript:           "This waiting room needs JavaScript to keep your place and forward you automatically. Please enable JavaScript and reload the page.",
		OldBrowser:         "This browser is too old for the waiting room. Please open this page in a current browser to get your waiting number.",
		SoldOut:            "Sold out",
		SoldOutDefault:     "The sale is over: everything has been sold. Thank you for waiting.",
		Maintenance:        "The shop is down for maintenance",
		MaintenanceDefault: "The shop is not available at the moment. This page tries again on its own.",
		QueueAll:           "Admission is on hold",
		QueueAllDefault:    "The shop is not letting anyone in right now; you keep your place.",
		ModeLink:           "More information",
		TurnTitle:          "It’s your turn! – {name}",
		NotifyMe:           "Notify me when it’s my turn",
	},
	"de": {
		Title:              "Warteraum",
		Live:               "Live",
		Joining:            "Ihre Wartenummer wird vergeben …",
		Verifying:          "Ihr Browser wird geprüft …",
		Waiting:            "Sie sind in der Warteschlange",
		PreQueue:           "Der Einlass öffnet in Kürze",
		Drawing:            "Die Auslosung läuft …",
		Admitted:           "Sie sind an der Reihe!",
		Forwarding:         "Sie sind an der Reihe – Sie werden weitergeleitet …",
		Paused:             "Der Einlass ist pausiert",
		PausedDefault:      "Der Einlass ist vorübergehend angehalten. Ihr Platz in der Warteschlange bleibt erhalten, und diese Seite läuft von selbst weiter, sobald der Einlass fortgesetzt wird.",
		PausedJoin:         "Der Einlass ist gerade angehalten, deshalb werden keine Wartenummern vergeben. Diese Seite versucht es von selbst weiter und vergibt Ihre Nummer, sobald der Einlass fortgesetzt wird.",
		Reconnecting:       "Verbindung unterbrochen – neuer Versuch …",
		Gone:               "Dieser Warteraum ist derzeit nicht verfügbar.",
		YourNumber:         "Ihre Wartenummer",
		Position:           "Ihre Position nach der Auslosung",
		Ahead:              "Vor Ihnen",
		Admitting:          "Einlass aktuell bis",
		NumberPrefix:       "Nr. ",
		Wait:               "Geschätzte Wartezeit",
		WaitUnderOne:       "weniger als eine Minute",
		WaitOne:            "etwa 1 Minute",
		WaitMinutes:        "etwa {n} Minuten",
		WaitHours:          "etwa {h} Std. {m} Min.",
		WaitPaused:         "angehalten, solange pausiert ist",
		OpensIn:            "Der Einlass öffnet in",
		DrawNote:           "Zur Öffnung wird die Reihenfolge aller Wartenden zufällig ausgelost – früh da zu sein bringt keinen Vorteil.",
		DrawSealed:         "Die Auslosung ist versiegelt: {hash}",
		DrawMade:           "Die Auslosung ist erfolgt: {hash}",
		DrawDetails:        "Details",
		DrawCheck:          "Auslosung prüfen",
		DrawChecking:       "Die Auslosung wird in Ihrem Browser geprüft …",
		DrawVerified:       "In Ihrem Browser geprüft: Position {position} folgt aus der veröffentlichten Auslosung.",
		DrawFailed:         "Die Prüfung ist fehlgeschlagen: Die veröffentlichte Auslosung ergibt nicht Ihre Position.",
		DrawConsistent:     "In Ihrem Browser geprüft: Die veröffentlichte Auslosung stimmt mit ihrer Versiegelung überein.",
		DayOne:             "1 Tag",
		DayMany:            "{n} Tage",
		KeepOpen:           "Lassen Sie diese Seite geöffnet. Sie aktualisiert sich von selbst und leitet Sie zum Shop weiter, sobald Sie an der Reihe sind.",
		KeepPlace:          "Ein Neuladen der Seite behält Ihren Platz.",
		Progress:           "Fortschritt bis zu Ihrem Einlass",
		Announce:           "Vor Ihnen: {ahead}. Geschätzte Wartezeit: {wait}.",
		Footer:             "Virtueller Warteraum",
		NotFoundTitle:      "Warteraum nicht gefunden",
		NotFoundText:       "Unter dieser Adresse gibt es keinen Warteraum. Bitte prüfen Sie den aufgerufenen Link oder kehren Sie zur Startseite des Shops zurück.",
		NoTargetTitle:      "Dieser Link führt noch nirgendwohin",
		NoTargetText:       "Für diesen Warteraum ist keine Shop-Adresse hinterlegt, an die er Sie weiterleiten könnte, daher kann sein Einstiegslink nicht verwendet werden. Bitte gehen Sie zur Startseite des Shops; der Veranstalter kann den Link durch Setzen der Ziel-URL beheben.",
		TooManyCodesTitle:  "Zu viele Code-Versuche",
		TooManyCodesText:   "Aus Ihrem Netz wurden gerade zu viele Zugangscodes versucht, daher wurde dieser nicht geprüft. Bitte warten Sie eine Minute und öffnen Sie Ihren Link erneut.",
		NoScript:           "Dieser Warteraum braucht JavaScript, um Ihren Platz zu halten und Sie automatisch weiterzuleiten. Bitte aktivieren Sie JavaScript und laden Sie die Seite neu.",
		OldBrowser:         "Dieser Browser ist zu alt für den Warteraum. Bitte öffnen Sie diese Seite in einem aktuellen Browser, um Ihre Wartenummer zu erhalten.",
		SoldOut:            "Ausverkauft",
		SoldOutDefault:     "Der Verkauf ist beendet: Alles ist verkauft. Vielen Dank fürs Warten.",
		Maintenance:        "Der Shop wird gerade gewartet",
		MaintenanceDefault: "Der Shop ist im Moment nicht erreichbar. Diese Seite versucht es von selbst weiter.",
		QueueAll:           "Der Einlass ist angehalten",
		QueueAllDefault:    "Der Shop lässt gerade niemanden ein; Ihr Platz bleibt erhalten.",
		ModeLink:           "Weitere Informationen",
		TurnTitle:          "Sie sind an der Reihe! – {name}",
		NotifyMe:           "Benachrichtigen, wenn ich an der Reihe bin",
	},
}
