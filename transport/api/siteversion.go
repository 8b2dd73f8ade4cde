package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// A site's version is its updatedAt: every write of its configuration
// moves it. GET and PATCH answer it as the ETag; a PATCH carrying it in
// If-Match is refused with 409 when the site changed in between, so a
// settings form opened before a change (a mode switch, another operator's
// edit) cannot write the older values back. The check is made by the room
// grain as it writes, so two writes cannot both pass it.

// etagOf is the ETag of site v.
func etagOf(v *room.View) string {
	return `"` + time.Unix(0, v.UpdatedAt).UTC().Format(time.RFC3339Nano) + `"`
}

// ifVersion reads If-Match: the site's version the write was prepared
// from, 0 when the header is absent or "*". A value that names no
// version can match none: 409.
func ifVersion(c echo.Context) (int64, error) {
	h := strings.TrimSpace(c.Request().Header.Get("If-Match"))
	if h == "" || h == "*" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.Trim(strings.TrimPrefix(h, "W/"), `"`))
	if err != nil || t.UnixNano() == 0 {
		return 0, errorf(http.StatusConflict, "conflict", "If-Match names no version of this site: read it again, then save.")
	}
	return t.UnixNano(), nil
}
