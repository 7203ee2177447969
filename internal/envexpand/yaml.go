package envexpand

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Error is a reference that could not be expanded, at a line of a YAML document.
type Error struct {
	Line int
	Err  error // wraps ErrSyntax or ErrUnset
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// YAML expands the references in every string of the document under n, keys and
// values, and returns the node to use in n's place (n itself, changed in place,
// unless n is a scalar that had to be replaced). A plain (unquoted) scalar that
// becomes a number, a boolean or null once expanded is that value, as if it had been
// written so (refuse: ${REFUSED} is an integer); a quoted one stays a string, and no
// value ever becomes a list or a mapping. Nodes keep their lines, so that later
// errors still point into the file. The first error is returned, an *Error.
func YAML(n ast.Node, lookup Lookup) (ast.Node, error) {
	var err error
	expand := func(child ast.Node) ast.Node {
		if err != nil || child == nil {
			return child
		}
		var out ast.Node
		out, err = YAML(child, lookup)
		return out
	}
	switch x := n.(type) {
	case *ast.DocumentNode:
		x.Body = expand(x.Body)
	case *ast.MappingNode:
		for _, v := range x.Values {
			expand(v)
		}
	case *ast.MappingValueNode:
		if key, ok := x.Key.(*ast.StringNode); ok { // keys stay strings
			err = expandString(key, lookup)
		}
		x.Value = expand(x.Value)
	case *ast.SequenceNode:
		for i, v := range x.Values {
			x.Values[i] = expand(v)
		}
	case *ast.TagNode:
		x.Value = expand(x.Value)
	case *ast.AnchorNode:
		x.Value = expand(x.Value)
	case *ast.LiteralNode:
		err = expandString(x.Value, lookup)
	case *ast.StringNode:
		before := x.Value
		if err = expandString(x, lookup); err == nil && x.Value != before && x.Token.Type == token.StringType {
			return retyped(x), nil
		}
	}
	return n, err
}

// expandString expands a string node's value in place.
func expandString(n *ast.StringNode, lookup Lookup) error {
	v, err := String(n.Value, lookup)
	if err != nil {
		return &Error{Line: n.Token.Position.Line, Err: err}
	}
	n.Value = v
	n.Token.Value = v
	return nil
}

// retyped is the node a plain scalar's expanded text reads as when it is a number,
// a boolean or null (YAML's resolution of a plain scalar, token.New), at n's
// position; n otherwise.
func retyped(n *ast.StringNode) ast.Node {
	pos := *n.Token.Position
	tk := token.New(n.Value, n.Value, &pos)
	switch tk.Type {
	case token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType, token.HexIntegerType:
		return ast.Integer(tk)
	case token.FloatType:
		return ast.Float(tk)
	case token.BoolType:
		return ast.Bool(tk)
	case token.NullType, token.ImplicitNullType:
		return ast.Null(tk)
	case token.InfinityType:
		return ast.Infinity(tk)
	case token.NanType:
		return ast.Nan(tk)
	}
	return n
}
