// Package secretbox keeps secrets at rest encrypted: the webhook secrets, endpoint
// signing keys and hook passwords the stores write are sealed with AES-256-GCM under
// the operator's key, bound to where they are kept (the additional data names the
// table, column and row), and opened when read.
//
// A Keyring holds one or more 32-byte keys: the first seals, every one opens, so a
// key is rotated by putting the new one first and keeping the old ones until every
// value is sealed again. A sealed value reads "sbx1:" + the key's id + ":" + base64
// of nonce and ciphertext; any other value is a secret stored in clear (before a key
// was set), which opens as it is. A nil *Keyring keeps secrets in clear and refuses
// to open a sealed one (ErrNoKey). It decides nothing about which values are
// secrets: the stores do.
package secretbox
