// Package envexpand replaces ${VAR} and ${VAR:-default} in text with values of the
// environment: in one string (String), and in every string of a parsed YAML document
// (YAML), so that a file can name the environment's values (a CI host, a port, a
// secret) without the text around them being changed.
//
// The syntax is the shell's subset that docker compose also reads: ${NAME} is NAME's
// value and an error when NAME is not set; ${NAME:-default} is the default when NAME
// is not set or empty; $${ writes a literal ${. Any other $ is itself. Values are
// inserted as text: they never add YAML structure.
//
// The package knows text and YAML nodes, not where the environment comes from: the
// caller's lookup decides (os.LookupEnv, or one that knows only some names).
package envexpand
