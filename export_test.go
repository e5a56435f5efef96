package agt

// DefaultStoreFrom is defaultStore with the environment passed in, for tests.
var DefaultStoreFrom = defaultStore
