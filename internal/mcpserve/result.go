package mcpserve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Bounds of every result, so that an assistant's context is not flooded.
const (
	// DefaultLimit is how many items a page holds unless the call asks.
	DefaultLimit = 50
	// MaxLimit is the most a call may ask for.
	MaxLimit = 500
	// MaxResultBytes bounds a result as JSON: a larger one is refused
	// with what to narrow.
	MaxResultBytes = 2 << 20
)

// Limit is the page size a call's limit asks for: DefaultLimit for 0,
// at most MaxLimit.
func Limit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, fmt.Errorf("invalid limit %d: give a number of items, 1 to %d (0 for %d)", limit, MaxLimit, DefaultLimit)
	case limit == 0:
		return DefaultLimit, nil
	case limit > MaxLimit:
		return MaxLimit, nil
	}
	return limit, nil
}

// cursorPrefix marks our cursors: an offset into the result of a call
// made again with the same arguments.
const cursorPrefix = "offset:"

// Offset is where the page a cursor names starts; 0 for none.
func Offset(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		if s, ok := strings.CutPrefix(string(data), cursorPrefix); ok {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("invalid cursor %q: pass the nextCursor of the previous result as it is", escape.Truncate(escape.String(cursor), 64))
}

// Page is the window [offset, offset+limit) of total items, and the
// cursor of the next page ("" at the end).
func Page(total, offset, limit int) (from, to int, next string) {
	from = min(offset, total)
	to = min(from+limit, total)
	if to < total {
		next = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(to)))
	}
	return from, to, next
}

// Safe is v as a client gets it, decoded into T (a map, a slice of maps):
// its JSON document decoded again with every string, map keys included,
// escaped (escape.Copy). What clusters and Secrets wrote reaches the
// client as data, in structured fields, with no control character,
// bidirectional override or invalid UTF-8. A document over MaxResultBytes
// is refused, saying what to narrow.
func Safe[T any](v any, narrow string) (T, error) {
	var out T
	data, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("failed to encode the result: %w", err)
	}
	if len(data) > MaxResultBytes {
		return out, fmt.Errorf("the result is %d bytes, over the %d this server returns: %s", len(data), MaxResultBytes, narrow)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("failed to decode the result: %w", err)
	}
	out = escape.Copy(out)
	// Escaping lengthens what it escapes (up to 7 bytes for 3): the bound
	// is the escaped result's.
	if data, err = json.Marshal(out); err == nil && len(data) > MaxResultBytes {
		return out, fmt.Errorf("the result is %d bytes, over the %d this server returns: %s", len(data), MaxResultBytes, narrow)
	}
	return out, nil
}

// Text is the short human text of a result beside its structured
// content.
func Text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: escape.OneLine(fmt.Sprintf(format, args...))}}}
}
