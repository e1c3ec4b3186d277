// Package cursor makes and reads the opaque cursors of keyset-paged lists: the time and
// id of a page's last row, so the next page starts after it. Clients treat a cursor as
// opaque; only this server reads it back.
package cursor

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ErrBad is Decode's error for a cursor this server did not give out.
var ErrBad = errors.New("cursor: not one this server gave out")

// Encode is the cursor of a row at t with id: base64 of "<unix nanoseconds>.<id>".
func Encode(t time.Time, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixNano(), 10) + "." + id.String()))
}

// Decode reads a cursor Encode made; the empty cursor is the caller's to read (where
// its first page starts).
func Decode(c string) (time.Time, uuid.UUID, error) {
	if c == "" || len(c) > 200 {
		return time.Time{}, uuid.Nil, ErrBad
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, uuid.Nil, ErrBad
	}
	ns, idText, ok := strings.Cut(string(b), ".")
	n, err1 := strconv.ParseInt(ns, 10, 64)
	id, err2 := uuid.Parse(idText)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, uuid.Nil, ErrBad
	}
	return time.Unix(0, n).UTC(), id, nil
}

// EncodeRanked is the cursor of a row ordered by time, then a small rank, then id (a
// text before its answer where their times tie): base64 of "<unix
// nanoseconds>.<rank>.<id>". Decode refuses it, and DecodeRanked an Encode cursor.
func EncodeRanked(t time.Time, rank int16, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixNano(), 10) + "." +
		strconv.Itoa(int(rank)) + "." + id.String()))
}

// DecodeRanked reads a cursor EncodeRanked made.
func DecodeRanked(c string) (time.Time, int16, uuid.UUID, error) {
	if c == "" || len(c) > 200 {
		return time.Time{}, 0, uuid.Nil, ErrBad
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, 0, uuid.Nil, ErrBad
	}
	parts := strings.SplitN(string(b), ".", 3)
	if len(parts) != 3 {
		return time.Time{}, 0, uuid.Nil, ErrBad
	}
	n, err1 := strconv.ParseInt(parts[0], 10, 64)
	rank, err2 := strconv.ParseInt(parts[1], 10, 16)
	id, err3 := uuid.Parse(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return time.Time{}, 0, uuid.Nil, ErrBad
	}
	return time.Unix(0, n).UTC(), int16(rank), id, nil
}
