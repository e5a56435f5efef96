package agt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// StoreFile is the name of the bbolt file Open uses inside a directory.
const StoreFile = "agt.db"

// TokensFile is the name of the bbolt token file Open keeps beside a bbolt
// store file (boltrepo.OpenTokenStore: mode 0600).
const TokensFile = "tokens.db"

// Options configure Open and New. A nil *Options means the defaults
// described on each field.
type Options struct {
	// Bolt configures the bbolt repository when Open is given a path. Nil
	// means boltrepo's defaults: the file is held open and locked until
	// Close (exclusive mode). Set Shared to let other processes, such as
	// the agt CLI, use the same file while the Host runs.
	Bolt *boltrepo.Options
	// Service configures the resource service. Nil means its defaults:
	// among them, an agent caller (a manager inside a Run) cannot change
	// manager, capabilities or enabled of any agent; set
	// AgentsMayChangePrivileges to let it. Its LaunchEnv is always the
	// Connector's (Connector.LaunchEnv below), so that a static test resolves
	// commands as a start does and the Service judges agent writes by the
	// Connector's launch allowlist.
	Service *resource.ServiceOptions
	// Connector configures how MCP servers are started and reached (the
	// environment a stdio server inherits, the launch allowlist, the
	// protocol version, ...). Nil means mcpconn's defaults, which allow
	// any command, directory and origin: set LaunchEnv.Allow before giving
	// untrusted agents resource_management, since a manager can register
	// a server and probe it, or edit one it has mounted.
	Connector *mcpconn.ConnectorOptions
	// Prober configures probes. Nil means mcpconn's defaults, with the
	// Host's SchemaCache.
	Prober *mcpconn.ProberOptions
	// Tokens keeps the OAuth credentials of MCP registrations, apart from
	// the documents. Nil means the default beside the store: for a bbolt
	// store, Open opens TokensFile in the store file's directory
	// (boltrepo.OpenTokenStore: created with mode 0600, refused when group
	// or others may read or write it; every bbolt store of one directory
	// shares it); for a store reached by URL, the store's own token store
	// when its repository offers one (pgrepo: the agt_oauth_tokens table,
	// created at its first use),
	// else one in memory; New, which is given a repository, keeps them in
	// memory for the Host's life. The Host closes only a token store it
	// opened. The Connector keeps its tokens there unless
	// Connector.OAuth.Tokens names another store.
	Tokens resource.TokenStore
	// FrameworkTools names the framework tools NewRun and Resume give a
	// Run that may manage resources, and FrameworkTools returns
	// (framework.Options.Tools: framework.ToolNames lists them). Nil means
	// all of them; an empty non-nil slice means none. New panics on a
	// name that is not a framework tool.
	FrameworkTools []string
}

// Host wires the parts of agt for an agent host: one Repository, the one
// resource service over it, and what starts and checks MCP servers. Every
// part is also reachable, and can be assembled by hand, from the
// sub-packages: the Host adds no behaviour of its own.
//
// A Host is safe for concurrent use. Close it when done.
type Host struct {
	repo      resource.Repository
	service   *resource.Service
	connector *mcpconn.Connector
	prober    *mcpconn.Prober
	schemas   *mcpconn.SchemaCache
	fwTools   []string
	closeRepo func() error // nil when the caller owns the repository
	tokens    resource.TokenStore
	// closeTokens closes the token store Open opened; nil otherwise.
	closeTokens func() error

	closeOnce sync.Once
	closeErr  error
}

// Open opens the store and returns a Host over it. store is one of:
//
//   - a URL whose scheme a store package registered
//     (resource.RegisterStore): postgres:// and postgresql:// once the
//     program imports github.com/agtsdk/agt/resource/pgrepo, which opens
//     them with its default Options (for others, open the repository
//     yourself and call New). A URL of a scheme no imported package
//     registered fails with resource.ErrNoStore: a program links only the
//     stores it imports;
//   - the path of an existing directory, or of a new one written with a
//     trailing separator ("data/"): the bbolt file StoreFile inside it,
//     created with its directories (mode 0700) when missing;
//   - any other path: that bbolt file, created with its parent directories
//     (mode 0700) when missing. A PostgreSQL keyword=value connection
//     string ("host=db port=5432 ...") is refused rather than taken for a
//     file name: give it as a postgres:// URL (a bbolt path of that form
//     starts with ./).
//
// ctx bounds the connection to a store reached by URL; a bbolt file waits
// at most Options.Bolt.LockTimeout for the lock another process holds.
func Open(ctx context.Context, store string, opts *Options) (*Host, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	if store == "" {
		return nil, errors.New("agt: no store given: pass a directory, a bbolt file path or a postgres:// URL")
	}
	if scheme := resourcefn.StoreScheme(store); scheme != "" {
		repo, closeRepo, err := resource.OpenStore(ctx, store)
		if err != nil {
			return nil, fmt.Errorf("agt: open the %s store: %w", scheme, err)
		}
		tokens := opts.Tokens
		if ts, ok := repo.(tokenStoreProvider); ok && tokens == nil {
			tokens = ts.TokenStore()
		}
		h := newHost(repo, opts, tokens)
		h.closeRepo = closeRepo
		return h, nil
	}
	if looksLikeConnString(store) {
		// Not repeated: such a string often holds a password.
		return nil, errors.New("agt: the store looks like a PostgreSQL keyword=value connection string, which would be taken for a bbolt file name: write it as a URL, postgres://USER:PASSWORD@HOST:PORT/DBNAME (other keywords, such as sslmode, go in its query), or start a bbolt path of that form with ./")
	}
	path, err := boltPath(store)
	if err != nil {
		return nil, err
	}
	repo, err := boltrepo.Open(path, opts.Bolt)
	if err != nil {
		return nil, fmt.Errorf("agt: open the store: %w", err)
	}
	if opts.Tokens != nil {
		h := newHost(repo, opts, opts.Tokens)
		h.closeRepo = repo.Close
		return h, nil
	}
	var tokOpts boltrepo.TokenStoreOptions
	if opts.Bolt != nil {
		tokOpts.LockTimeout, tokOpts.NoSync = opts.Bolt.LockTimeout, opts.Bolt.NoSync
	}
	tokens, err := boltrepo.OpenTokenStore(filepath.Join(filepath.Dir(path), TokensFile), &tokOpts)
	if err != nil {
		_ = repo.Close()
		return nil, fmt.Errorf("agt: open the token store: %w", err)
	}
	h := newHost(repo, opts, tokens)
	h.closeRepo = repo.Close
	h.closeTokens = tokens.Close
	return h, nil
}

// tokenStoreProvider is a repository that keeps tokens too
// (pgrepo.Repo).
type tokenStoreProvider interface {
	TokenStore() resource.TokenStore
}

// DefaultStore returns the store the agt command-line tool opens when it is
// given no --db: $AGT_STORE, else $AGT_DB, else $XDG_DATA_HOME/agt/agt.db
// (when XDG_DATA_HOME is an absolute path), else
// $HOME/.local/share/agt/agt.db. A host that opens it works on the store an
// operator's agt commands see; for a bbolt file, open it with
// Options.Bolt.Shared so that both can use it at once. DefaultStore reads
// the environment when called; Open never reads it.
func DefaultStore() (string, error) {
	return defaultStore(os.LookupEnv)
}

func defaultStore(lookup func(string) (string, bool)) (string, error) {
	for _, k := range []string{"AGT_STORE", "AGT_DB"} {
		if v, ok := lookup(k); ok && v != "" {
			return v, nil
		}
	}
	if v, ok := lookup("XDG_DATA_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "agt", StoreFile), nil
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		return "", errors.New("agt: no default store: set $AGT_STORE (neither $XDG_DATA_HOME nor $HOME is set)")
	}
	return filepath.Join(home, ".local", "share", "agt", StoreFile), nil
}

// boltPath resolves Open's path argument to the bbolt file, creating the
// parent directories of a new file.
// libpqKeywords are the keywords of a PostgreSQL keyword=value connection
// string (libpq's, and pgx's pool_ ones are caught as pairs).
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true,
	"password": true, "passfile": true, "require_auth": true, "channel_binding": true,
	"connect_timeout": true, "client_encoding": true, "options": true,
	"application_name": true, "fallback_application_name": true, "keepalives": true,
	"keepalives_idle": true, "keepalives_interval": true, "keepalives_count": true,
	"tcp_user_timeout": true, "replication": true, "gssencmode": true, "sslmode": true,
	"requiressl": true, "sslcompression": true, "sslcert": true, "sslkey": true,
	"sslpassword": true, "sslcertmode": true, "sslrootcert": true, "sslcrl": true,
	"sslcrldir": true, "sslsni": true, "requirepeer": true, "ssl_min_protocol_version": true,
	"ssl_max_protocol_version": true, "krbsrvname": true, "gsslib": true,
	"gssdelegation": true, "service": true, "target_session_attrs": true,
	"load_balance_hosts": true,
}

// looksLikeConnString reports whether store is a keyword=value connection
// string rather than a path: a word of it is a libpq keyword followed by
// '=' (spaces around it allowed, as libpq allows), or it is two or more
// words that are all keyword=value pairs. A path such as "a=b.db",
// "my store.db" or "./host=x.db" is not.
func looksLikeConnString(store string) bool {
	words := strings.Fields(store)
	allPairs := len(words) >= 2
	for i, w := range words {
		key, _, isPair := strings.Cut(w, "=")
		if !isPair && i+1 < len(words) && strings.HasPrefix(words[i+1], "=") {
			key, isPair = w, true // "host = x"
		}
		if isPair && libpqKeywords[key] {
			return true
		}
		if !isPair || !isKeywordShape(key) {
			allPairs = false
		}
	}
	return allPairs
}

// isKeywordShape reports whether s has the shape of a connection
// string's keyword: a letter, then letters, digits or underscores.
func isKeywordShape(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func boltPath(store string) (string, error) {
	if st, err := os.Stat(store); err == nil && st.IsDir() {
		return filepath.Join(store, StoreFile), nil
	}
	if os.IsPathSeparator(store[len(store)-1]) {
		// A directory that does not exist yet: "data/" means the file in it.
		if err := os.MkdirAll(store, 0o700); err != nil {
			return "", fmt.Errorf("agt: create the store's directory: %w", err)
		}
		return filepath.Join(store, StoreFile), nil
	}
	if err := os.MkdirAll(filepath.Dir(store), 0o700); err != nil {
		return "", fmt.Errorf("agt: create the store's directory: %w", err)
	}
	return store, nil
}

// New returns a Host over a Repository the caller opened, for hosts that
// bring their own store. Close does not close repo: its owner does. Nil
// Options.Tokens means tokens in memory (see Options.Tokens). It fails
// only on opts: a name in Options.FrameworkTools that is not a framework
// tool.
func New(repo resource.Repository, opts *Options) (*Host, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	return newHost(repo, opts, opts.Tokens), nil
}

// checkOptions fails on the options Open and New refuse: a misspelled
// framework tool fails here, not at the first Run.
func checkOptions(opts *Options) error {
	if err := (&framework.Options{Tools: opts.FrameworkTools}).Validate(); err != nil {
		return fmt.Errorf("agt: Options.FrameworkTools: %w", err)
	}
	return nil
}

// newHost is New with the token store chosen; nil means one in memory.
func newHost(repo resource.Repository, opts *Options, tokens resource.TokenStore) *Host {
	if tokens == nil {
		tokens = resource.NewMemoryTokenStore()
	}
	connector := mcpconn.NewConnector(connectorOptions(opts.Connector, tokens))
	var svcOpts resource.ServiceOptions
	if opts.Service != nil {
		svcOpts = *opts.Service
	}
	// The Service judges by the Connector's launch environment, and its
	// fix texts name the option the host set it through.
	var launch resource.LaunchEnv
	if opts.Connector != nil && opts.Connector.LaunchEnv != nil {
		launch = opts.Connector.LaunchEnv.Clone()
	}
	resourcefn.SetLaunchEnvOption(&launch, "mcpconn.ConnectorOptions.LaunchEnv")
	svcOpts.LaunchEnv = &launch
	// The Prober and the Runs share one compiled-schema cache: a server
	// probed after its registration does not compile again when mounted.
	schemas := new(mcpconn.SchemaCache)
	var proberOpts mcpconn.ProberOptions
	if opts.Prober != nil {
		proberOpts = *opts.Prober
	}
	if proberOpts.SchemaCache == nil {
		proberOpts.SchemaCache = schemas
	}
	return &Host{
		repo:      repo,
		tokens:    tokens,
		service:   resource.NewService(repo, &svcOpts),
		connector: connector,
		prober:    mcpconn.NewProber(repo, connector, &proberOpts),
		schemas:   schemas,
		fwTools:   slices.Clone(opts.FrameworkTools),
	}
}

// Repository returns the Host's repository.
func (h *Host) Repository() resource.Repository { return h.repo }

// Tokens returns the Host's token store (Options.Tokens): the OAuth
// credentials of MCP registrations.
func (h *Host) Tokens() resource.TokenStore { return h.tokens }

// Resources returns the one resource service: the framework tools and the
// agt CLI write through it.
func (h *Host) Resources() *resource.Service { return h.service }

// Connector returns the one Connector: Runs and the Prober start and reach
// MCP servers through it, the same way.
func (h *Host) Connector() *mcpconn.Connector { return h.connector }

// Prober returns the Prober over the Host's repository and Connector.
func (h *Host) Prober() *mcpconn.Prober { return h.prober }

// SchemaCache returns the compiled-schema cache the Host's Runs and its
// Prober (unless Options.Prober names another) share.
func (h *Host) SchemaCache() *mcpconn.SchemaCache { return h.schemas }

// NewRun starts a Run of agent: it fills opts' Agent, and its Repository,
// Connector and SchemaCache when nil, with the Host's, adds the framework
// tools to its HostTools (the Run shows them only to an agent that may
// manage resources), and calls run.New. opts.Permission is required, as for
// run.New: there is no implicit allow. opts.ServerStderrToModel applies to
// the framework tools too. The caller closes the Run.
func (h *Host) NewRun(ctx context.Context, agent resource.Ref, opts *run.Options) (*run.Run, error) {
	return run.New(ctx, h.runOptions(agent, opts))
}

// Resume starts a Run of cp's agent with the options NewRun would give it,
// and checks it against the checkpoint (run.Resume): a Run suspended after
// Run.Checkpoint resumes only if its agent's static inputs and tool
// snapshot are unchanged, else the error matches run.ErrFingerprintMismatch
// (its message names what differs) and no Run is left open. Pass the same
// options as to NewRun: the model, prompt and permissions are part of the
// fingerprint.
func (h *Host) Resume(ctx context.Context, cp run.Checkpoint, opts *run.Options) (*run.Run, error) {
	return run.Resume(ctx, cp, h.runOptions(cp.Agent, opts))
}

// runOptions fills a copy of opts as NewRun documents.
func (h *Host) runOptions(agent resource.Ref, opts *run.Options) *run.Options {
	var o run.Options
	if opts != nil {
		o = *opts
	}
	o.Agent = agent
	if o.Repository == nil {
		o.Repository = h.repo
	}
	if o.Connector == nil {
		o.Connector = h.connector
	}
	if o.SchemaCache == nil {
		o.SchemaCache = h.schemas
	}
	// The framework tools of a Run show a server's stderr to its model
	// exactly when the Run does.
	fw := framework.Tools(h.service, h.prober, &framework.Options{ServerStderrToModel: o.ServerStderrToModel, Tools: h.fwTools})
	o.HostTools = append(fw, o.HostTools...)
	return &o
}

// FrameworkTools returns the framework tools (resource_write,
// resource_read, resource_test, mcp_probe, agent_mcp_list, or those
// Options.FrameworkTools names) over the Host's resource service and
// Prober, as run host tools marked ManagementOnly.
// NewRun adds them; a host that calls run.New itself passes them in
// run.Options.HostTools. They keep servers' stderr out of their answers
// (framework.Options defaults); call framework.Tools to choose otherwise.
func (h *Host) FrameworkTools() []run.HostTool {
	return framework.Tools(h.service, h.prober, &framework.Options{Tools: h.fwTools})
}

// Close closes the Connector's shared connections (mcpconn.Connector.Close:
// a Run still open on one sees its server lost) and releases the store,
// and the token store, if Open opened them. Runs started from the Host
// must be closed by their owners; Close does not end them. Close may be
// called more than once, also concurrently: later calls return the first
// call's result.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		errs := []error{h.connector.Close()}
		if h.closeTokens != nil {
			errs = append(errs, h.closeTokens())
		}
		if h.closeRepo != nil {
			errs = append(errs, h.closeRepo())
		}
		h.closeErr = errors.Join(errs...)
	})
	return h.closeErr
}

// connectorOptions are the Connector's options with the Host's token
// store, unless they name one of their own.
func connectorOptions(o *mcpconn.ConnectorOptions, tokens resource.TokenStore) *mcpconn.ConnectorOptions {
	var c mcpconn.ConnectorOptions
	if o != nil {
		c = *o
	}
	var oauth mcpconn.OAuthOptions
	if c.OAuth != nil {
		oauth = *c.OAuth
	}
	if oauth.Tokens == nil {
		oauth.Tokens = tokens
	}
	c.OAuth = &oauth
	return &c
}
