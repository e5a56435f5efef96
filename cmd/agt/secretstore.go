package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

// The CLI's secret store, which resolves ${secret:NAME} for the servers
// agt starts (resource.LaunchEnv.Secrets). Values live in the OS keychain
// (macOS Keychain, Windows Credential Manager, a Secret Service on D-Bus)
// through github.com/zalando/go-keyring when one answers, else in a file
// beside the store's tokens.db. The file, secrets.json, is the index of
// names either way (the keychains have no listing by service): mode 0600,
// refused when its group or others may read or write it. Values are never
// printed, never taken from the command line, and never in an error.

// Where the values are kept ($AGT_SECRET_STORE).
const (
	secretStoreVar = "AGT_SECRET_STORE"
	// storeAuto: the OS keychain when one answers, else the file.
	storeAuto = ""
	// storeFile: the file beside tokens.db.
	storeFile = "file"
	// storeKeyring: the OS keychain; fail when none answers.
	storeKeyring = "keyring"
)

// Limits of the secret store.
const (
	// secretsFile is the file's name, beside tokens.db.
	secretsFile = "secrets.json"
	// maxSecretsFileBytes bounds the file read.
	maxSecretsFileBytes = 4 << 20
	// maxSecretBytes bounds one value: resource's bound of a resolved
	// reference.
	maxSecretBytes = 64 << 10
	// keyringService is the service under which the keychain keeps
	// agt's secrets.
	keyringService = "agt"
	// keyringTimeout bounds one keychain operation: a keychain that waits
	// for a person to unlock it, or a D-Bus that never answers, is given
	// up on.
	keyringTimeout = 10 * time.Second
)

// secretsDoc is the file's content.
type secretsDoc struct {
	Secrets map[string]*secretEntry `json:"secrets"`
	// Orphans are keychain items no entry points to: the items of Sets
	// given up on (one may still land) and replaced items not yet
	// deleted. Each change that reaches the keychain deletes them; at
	// most maxOrphans are kept, the oldest forgotten.
	Orphans []string `json:"orphans,omitempty"`
}

// maxOrphans bounds secretsDoc.Orphans.
const maxOrphans = 64

// secretEntry is one secret. Value is empty when the keychain holds it.
type secretEntry struct {
	Value   string `json:"value,omitempty"`
	Keyring bool   `json:"keyring,omitempty"`
	// Item is the keychain item that holds the value, new at each set so
	// that a Set given up on never writes the item an entry points to;
	// empty (a file written before items) means the name itself.
	Item string `json:"item,omitempty"`
	// Refs lists the registrations that may read it (exact, or a prefix
	// ending in '*'); empty means every registration agt starts.
	Refs []string `json:"refs,omitempty"`
}

// secretStore is the store of one --db.
type secretStore struct {
	path string // the file
	mode string // storeAuto, storeFile or storeKeyring
	// kc is the keychain; nil means the OS's (osKeychain). Tests set
	// their own, each its own.
	kc *keychain
}

// keychain is the store's keychain.
func (s *secretStore) keychain() *keychain {
	if s.kc == nil {
		return osKeychain
	}
	return s.kc
}

// item is the keychain item of a keychain entry.
func (e *secretEntry) item(name string) string {
	if e.Item == "" {
		return name
	}
	return e.Item
}

// newKeychainItem names a new keychain item for name.
func newKeychainItem(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return name + "#" + hex.EncodeToString(b[:])
}

// addOrphan records an item no entry points to, to be deleted.
func (d *secretsDoc) addOrphan(item string) {
	if !slices.Contains(d.Orphans, item) {
		d.Orphans = append(d.Orphans, item)
	}
	if n := len(d.Orphans) - maxOrphans; n > 0 {
		d.Orphans = slices.Delete(d.Orphans, 0, n)
	}
}

// dropOrphans deletes the orphaned items from the keychain, keeping those
// it could not delete; it stops at the first the keychain does not
// answer, so that a stuck keychain costs one timeout.
func (s *secretStore) dropOrphans(ctx context.Context, doc *secretsDoc) {
	for len(doc.Orphans) > 0 {
		err := s.keychain().delete(ctx, doc.Orphans[0])
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return
		}
		doc.Orphans = doc.Orphans[1:]
	}
	doc.Orphans = nil
}

// secretsDir is the directory of tokens.db for store: beside a bbolt
// file (in a directory given as the store); for a store reached by URL,
// agt's data directory.
func secretsDir(store string) (string, error) {
	if store == "" {
		var err error
		if store, err = agt.DefaultStore(); err != nil {
			return "", err
		}
	}
	if resourcefn.StoreScheme(store) != "" {
		if v := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(v) {
			return filepath.Join(v, "agt"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("no directory for the secret file: set $XDG_DATA_HOME or $HOME")
		}
		return filepath.Join(home, ".local", "share", "agt"), nil
	}
	if st, err := os.Stat(store); err == nil && st.IsDir() || os.IsPathSeparator(store[len(store)-1]) {
		return filepath.Clean(store), nil
	}
	return filepath.Dir(store), nil
}

// openSecretStore is the store beside e's store.
func (e *env) openSecretStore() (*secretStore, error) {
	dir, err := secretsDir(e.global.store)
	if err != nil {
		return nil, err
	}
	mode := os.Getenv(secretStoreVar)
	switch mode {
	case storeAuto, storeFile, storeKeyring:
	default:
		return nil, fmt.Errorf("$%s is %s: set file, keyring, or leave it unset (the OS keychain when there is one, else the file)", secretStoreVar, clip(mode))
	}
	return &secretStore{path: filepath.Join(dir, secretsFile), mode: mode}, nil
}

// load reads the file; a missing file is an empty store.
func (s *secretStore) load() (*secretsDoc, error) {
	doc := &secretsDoc{Secrets: map[string]*secretEntry{}}
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the secret file %s cannot be read: %w", s.path, fsErr(err))
	}
	defer f.Close()
	if err := s.checkMode(f); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("the secret file %s cannot be read: %w", s.path, fsErr(err))
	}
	if len(b) > maxSecretsFileBytes {
		return nil, fmt.Errorf("the secret file %s is larger than %d bytes", s.path, maxSecretsFileBytes)
	}
	// The file's text is never quoted: it holds values.
	if err := json.Unmarshal(b, doc); err != nil || doc.Secrets == nil {
		return nil, fmt.Errorf("the secret file %s is not agt's (JSON {\"secrets\": {...}}): move it away, and set the secrets again with 'agt secret set NAME'", s.path)
	}
	return doc, nil
}

// checkMode refuses a file that its group or others may read or write,
// and one that is not a regular file.
func (s *secretStore) checkMode(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("the secret file %s cannot be read: %w", s.path, fsErr(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("the secret file %s is not a regular file", s.path)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the secret file %s may be read or written by its group or others (mode %04o): agt will not use it; run 'chmod 600 %s' if nobody else could have read it, else move it away and set the secrets again", s.path, st.Mode().Perm(), s.path)
	}
	return nil
}

// save writes doc in place of the file: a new file of mode 0600 renamed
// over the old one.
func (s *secretStore) save(doc *secretsDoc) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if len(b)+1 > maxSecretsFileBytes {
		// What load would refuse is never written: every secret would
		// become unreadable.
		return fmt.Errorf("the secret file would hold more than %d bytes: remove secrets no registration uses (agt secret rm NAME)", maxSecretsFileBytes)
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the directory of the secret file: %w", fsErr(err))
	}
	tmp, err := os.CreateTemp(dir, ".secrets-*.json")
	if err != nil {
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("writing the secret file: %w", fsErr(err))
	}
	return nil
}

// update changes the store under its lock: read, fn, write.
func (s *secretStore) update(fn func(doc *secretsDoc) error) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of the secret file: %w", fsErr(err))
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("locking the secret file: %w", err)
	}
	defer unlock()
	doc, err := s.load()
	if err != nil {
		return err
	}
	if err := fn(doc); err != nil {
		return err
	}
	return s.save(doc)
}

// useKeyring says whether values go to the OS keychain: always with
// storeKeyring (an error when none answers), when one answers with
// storeAuto; why says why not, for the operator.
func (s *secretStore) useKeyring(ctx context.Context) (use bool, why string, err error) {
	if s.mode == storeFile {
		return false, "$" + secretStoreVar + " is file", nil
	}
	_, kerr := s.keychain().get(ctx, "agt-probe")
	switch {
	case kerr == nil, errors.Is(kerr, keyring.ErrNotFound):
		return true, "", nil
	case s.mode == storeKeyring:
		return false, "", fmt.Errorf("$%s is keyring, but no OS keychain answers (%s): unset it to keep secrets in the file beside the store", secretStoreVar, keyringProblem(kerr))
	}
	return false, "no OS keychain answers here (" + keyringProblem(kerr) + ")", nil
}

// keyringProblem says what went wrong with the keychain, without any
// value (go-keyring's errors name no value; they are cut all the same).
func keyringProblem(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("it did not answer within %s", keyringTimeout)
	case errors.Is(err, errKeychainBusy):
		return err.Error()
	}
	return shown(oneLine(err.Error(), 160), 160)
}

// set stores a value for name, readable by refs (empty: every
// registration); where says where it went.
//
// In the keychain, each set writes a new item and points the entry to it,
// the old item then deleted: a Set the keychain did not answer may still
// land (its call goes on, in this process or in the child process of the
// OS's keychain tool), but in an item nothing reads, recorded as an
// orphan and deleted by a later change, never over a newer value.
func (s *secretStore) set(ctx context.Context, name, value string, refs []string) (where string, replaced bool, err error) {
	inKeyring, why, err := s.useKeyring(ctx)
	if err != nil {
		return "", false, err
	}
	var setErr error
	err = s.update(func(doc *secretsDoc) error {
		old := doc.Secrets[name]
		replaced = old != nil
		entry := &secretEntry{Refs: refs}
		if inKeyring {
			item := newKeychainItem(name)
			if err := s.keychain().set(ctx, item, value); err != nil {
				// Saved without a change but this: the old value stays.
				doc.addOrphan(item)
				setErr = fmt.Errorf("the OS keychain did not store it (%s): set %s=file to keep it in the file beside the store", keyringProblem(err), secretStoreVar)
				return nil
			}
			entry.Keyring, entry.Item = true, item
		} else {
			entry.Value = value
		}
		if old != nil && old.Keyring {
			// The new value is kept: the old item goes.
			doc.addOrphan(old.item(name))
		}
		doc.Secrets[name] = entry
		if inKeyring || s.mode == storeFile {
			// Not when no keychain answered the probe: each delete would
			// wait for its timeout.
			s.dropOrphans(ctx, doc)
		}
		return nil
	})
	if err == nil {
		err = setErr
	}
	if err != nil {
		return "", false, err
	}
	if inKeyring {
		return "the OS keychain (service " + keyringService + "); its name is listed in " + s.path, replaced, nil
	}
	return s.path + " (mode 0600; " + why + ")", replaced, nil
}

// remove deletes name; found is false when there was none.
func (s *secretStore) remove(ctx context.Context, name string) (found bool, err error) {
	err = s.update(func(doc *secretsDoc) error {
		entry := doc.Secrets[name]
		if entry == nil {
			return nil
		}
		found = true
		if entry.Keyring {
			kerr := s.keychain().delete(ctx, entry.item(name))
			if kerr != nil && !errors.Is(kerr, keyring.ErrNotFound) {
				return fmt.Errorf("the OS keychain did not remove it (%s)", keyringProblem(kerr))
			}
			s.dropOrphans(ctx, doc)
		}
		delete(doc.Secrets, name)
		return nil
	})
	return found, err
}

// names lists the stored names, sorted, with their entries.
func (s *secretStore) names() ([]string, map[string]*secretEntry, error) {
	doc, err := s.load()
	if err != nil {
		return nil, nil, err
	}
	return slices.Sorted(maps.Keys(doc.Secrets)), doc.Secrets, nil
}

// errSecretMissing, errSecretNotForRef and errSecretUnreadable are why
// Resolve failed; the start's error never shows them (resource drops a
// resolver's error), so the CLI says it again (secretFailure).
var (
	errSecretMissing    = errors.New("not in agt's secret store")
	errSecretNotForRef  = errors.New("agt's secret store keeps it for other registrations")
	errSecretUnreadable = errors.New("agt's secret store cannot be read")
)

// Resolve is the resource.SecretResolver of the CLI.
func (s *secretStore) Resolve(ctx context.Context, ref resource.Ref, name string) (string, error) {
	doc, err := s.load()
	if err != nil {
		return "", errSecretUnreadable
	}
	entry := doc.Secrets[name]
	switch {
	case entry == nil:
		return "", errSecretMissing
	case !refAllowed(ref, entry.Refs):
		return "", errSecretNotForRef
	case entry.Keyring:
		v, err := s.keychain().get(ctx, entry.item(name))
		if err != nil {
			return "", errSecretUnreadable
		}
		return v, nil
	}
	return entry.Value, nil
}

// why says why Resolve fails for name and ref, nil when it does not.
func (s *secretStore) why(ctx context.Context, ref resource.Ref, name string) error {
	if _, err := s.load(); err != nil {
		return err // what is wrong with the file, without its text
	}
	_, err := s.Resolve(ctx, ref, name)
	return err
}

// refAllowed reports whether ref may read a secret kept for refs: every
// registration when refs is empty, else those it names exactly or by a
// prefix ending in '*'.
func refAllowed(ref resource.Ref, refs []string) bool {
	if len(refs) == 0 {
		return true
	}
	for _, r := range refs {
		if p, ok := strings.CutSuffix(r, "*"); ok && strings.HasPrefix(string(ref), p) || r == string(ref) {
			return true
		}
	}
	return false
}

// fsErr is the system's error inside a file operation's, without the
// path the message names already.
func fsErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// trimLineEnd drops one trailing line break, as a shell's echo or a
// file's last line leaves it.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

var _ resource.SecretResolver = (*secretStore)(nil)
