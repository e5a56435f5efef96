package main

import (
	"context"
	"errors"
	"time"

	"github.com/zalando/go-keyring"
)

// keychain runs the operations of one keychain (go-keyring's Keyring: the
// OS's, or a test's in-memory one) one at a time, each bounded by a
// timeout.
//
// A keychain call cannot be stopped (a D-Bus call, or the child process
// macOS's keychain is reached through, waits for as long as the keychain
// waits for a person), so a call given up on goes on, on a goroutine of
// its own. The keychain accounts for it: that goroutine holds busy until
// its call returns, and the next call waits for busy (within its own
// timeout) before it starts. So at most one goroutine per keychain
// outlives the call that started it, and a call given up on, a Set
// included, has returned before any later call starts: it cannot land
// after a newer one. (A Set given up on writes under an item name of its
// own, which the secret file never points to: see secretStore.set.)
type keychain struct {
	kr      keyring.Keyring
	timeout time.Duration
	// busy holds a token while a call runs, one given up on included.
	busy chan struct{}
}

// newKeychain is the keychain of kr with the given timeout per call.
func newKeychain(kr keyring.Keyring, timeout time.Duration) *keychain {
	return &keychain{kr: kr, timeout: timeout, busy: make(chan struct{}, 1)}
}

// osKeychain is the OS keychain, through go-keyring's package functions:
// one for the process, as the OS's keychain is one.
var osKeychain = newKeychain(osKeyring{}, keyringTimeout)

// osKeyring is go-keyring's OS keychain as a keyring.Keyring.
type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (osKeyring) Set(service, user, pw string) error       { return keyring.Set(service, user, pw) }
func (osKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }
func (osKeyring) DeleteAll(service string) error           { return keyring.DeleteAll(service) }

// errKeychainBusy is a call that could not start within the timeout: an
// earlier call the keychain did not answer still runs.
var errKeychainBusy = errors.New("an earlier operation that it did not answer still runs")

// do runs op on the keychain, waiting at most the keychain's timeout (or
// ctx) for an earlier call to end and for op's answer. On a timeout it
// returns context.DeadlineExceeded, or errKeychainBusy when op never
// started.
func (k *keychain) do(ctx context.Context, op func(kr keyring.Keyring) (string, error)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	select {
	case k.busy <- struct{}{}:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", errKeychainBusy
		}
		return "", ctx.Err()
	}
	type answer struct {
		v   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() { <-k.busy }()
		v, err := op(k.kr)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (k *keychain) get(ctx context.Context, user string) (string, error) {
	return k.do(ctx, func(kr keyring.Keyring) (string, error) { return kr.Get(keyringService, user) })
}

func (k *keychain) set(ctx context.Context, user, value string) error {
	_, err := k.do(ctx, func(kr keyring.Keyring) (string, error) { return "", kr.Set(keyringService, user, value) })
	return err
}

func (k *keychain) delete(ctx context.Context, user string) error {
	_, err := k.do(ctx, func(kr keyring.Keyring) (string, error) { return "", kr.Delete(keyringService, user) })
	return err
}
