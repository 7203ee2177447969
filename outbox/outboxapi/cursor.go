package outboxapi

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Cursors are opaque to clients: the listing they belong to and the key of the last
// row of a page (an event or delivery id, an audit entry's number), so that the next
// page starts after that row whatever arrived meanwhile (keyset paging).
const (
	cursorEvents     = "e"
	cursorDeliveries = "d"
	cursorAudit      = "a"
	cursorEndpoints  = "w"
	cursorTypes      = "t"
)

// encodeCursor is the cursor after key in a listing of kind.
func encodeCursor(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + key))
}

// decodeCursor returns the key of a cursor of kind; ok is false for anything that
// is not one (another listing's cursor included).
func decodeCursor(kind, cursor string) (key string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	k, key, found := strings.Cut(string(raw), ":")
	if !found || k != kind || key == "" {
		return "", false
	}
	return key, true
}

// cursorKey decodes the cursor query parameter of a listing of kind; a cursor that
// is not one of its own is a 400 naming it.
func cursorKey(kind, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	key, ok := decodeCursor(kind, cursor)
	if !ok {
		return "", huma.Error400BadRequest("invalid cursor", &huma.ErrorDetail{Location: "query.cursor",
			Message: "not a cursor of this listing: pass the nextCursor of its previous page", Value: cursor})
	}
	return key, nil
}

// nextCursor is the cursor of the page after one of n rows whose last key is last,
// or nil when the page was not full (nothing more to read).
func nextCursor(kind string, n, limit int, last string) *string {
	if n < limit || n == 0 {
		return nil
	}
	c := encodeCursor(kind, last)
	return &c
}

// keysetPage is a page of a listing of kind as the API answers it: each row as
// JSON (an empty list, never null), and the cursor after the last row's key, nil
// when the page was not full.
func keysetPage[Row, JSON any](kind string, rows []Row, limit int, toJSON func(Row) JSON, key func(Row) string) ([]JSON, *string) {
	data := make([]JSON, 0, len(rows))
	for _, row := range rows {
		data = append(data, toJSON(row))
	}
	if len(rows) == 0 {
		return data, nil
	}
	return data, nextCursor(kind, len(rows), limit, key(rows[len(rows)-1]))
}

func formatAuditID(id int64) string { return strconv.FormatInt(id, 10) }

// auditCursorID decodes an audit cursor; a malformed one is a 400.
func auditCursorID(cursor string) (int64, error) {
	key, err := cursorKey(cursorAudit, cursor)
	if err != nil || key == "" {
		return 0, err
	}
	id, perr := strconv.ParseInt(key, 10, 64)
	if perr != nil || id <= 0 {
		return 0, huma.Error400BadRequest("invalid cursor", &huma.ErrorDetail{Location: "query.cursor",
			Message: "not a cursor of this listing: pass the nextCursor of its previous page", Value: cursor})
	}
	return id, nil
}
