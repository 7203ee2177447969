package pgstore

// Listening receives each time the store's listener has (re)started listening.
func Listening(s *Store) <-chan struct{} { return s.wake.listening }
