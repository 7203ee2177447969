package verbs

// Splitting already-validated JSON into object members and array elements. Decode
// checks the whole document once with json.Valid; after that, walking it with these
// splitters instead of calling json.Unmarshal per level avoids re-validating every
// nested value once per level above it.

// member is one key and its raw value, in document order.
type member struct {
	key string
	val []byte
}

// lookup returns the value of key in members.
func lookup(members []member, key string) ([]byte, bool) {
	if j := indexOf(members, key); j >= 0 {
		return members[j].val, true
	}
	return nil, false
}

// splitObject returns the members of a valid JSON object. A key given twice keeps
// its first position and its last value, as encoding/json decodes duplicates. ok is
// false when raw is not an object.
func splitObject(raw []byte) (members []member, ok bool) {
	members = []member{}
	ok = scanItems(raw, '{', '}', func(i int) int {
		end := skipString(raw, i)
		if end < 0 {
			return -1
		}
		key, kok := unquoteKey(raw[i:end])
		if !kok {
			return -1
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return -1
		}
		i = skipSpace(raw, i+1)
		vend := skipValue(raw, i)
		if vend < 0 {
			return -1
		}
		if j := indexOf(members, key); j >= 0 {
			members[j].val = raw[i:vend]
		} else {
			members = append(members, member{key: key, val: raw[i:vend]})
		}
		return vend
	})
	if !ok {
		return nil, false
	}
	return members, true
}

func indexOf(members []member, key string) int {
	for j := range members {
		if members[j].key == key {
			return j
		}
	}
	return -1
}

// splitArray returns the elements of a valid JSON array; ok is false when raw is not
// an array.
func splitArray(raw []byte) (elems [][]byte, ok bool) {
	elems = [][]byte{}
	ok = scanItems(raw, '[', ']', func(i int) int {
		end := skipValue(raw, i)
		if end >= 0 {
			elems = append(elems, raw[i:end])
		}
		return end
	})
	if !ok {
		return nil, false
	}
	return elems, true
}

// scanItems walks the object or array that raw holds, between open and closing:
// item reads the member or element starting at raw[i] and returns the index just
// past it, or -1 when it is not one. It reports whether raw is that whole object or
// array, and nothing more.
func scanItems(raw []byte, open, closing byte, item func(i int) int) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != open {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == closing {
		return true
	}
	for i < len(raw) {
		end := item(i)
		if end < 0 {
			return false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case closing:
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at raw[i], or -1.
func skipString(raw []byte, i int) int {
	if i >= len(raw) || raw[i] != '"' {
		return -1
	}
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at raw[i], or -1.
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				end := skipString(raw, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		start := i
		for i < len(raw) {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if i == start {
					return -1
				}
				return i
			}
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
}

// unquoteKey decodes an object key, without allocation beyond the string when it
// has no escapes.
func unquoteKey(q []byte) (string, bool) {
	var d decoder
	s, err := d.unquote(q, "")
	return s, err == nil
}
