package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/httpserve"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ui"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

const flagOpen = "open"

// uiBatch is the least time between two batches of the page's stream: the
// changes in between are one batch, so that a fleet where everything
// moves stays smooth.
const uiBatch = 200 * time.Millisecond

// UIOptions are the flags of `kubectl fleet ui`.
type UIOptions struct {
	*RootOptions
	WalkFlags
	ViewFlags
	httpserve.Endpoint

	// Open opens the page in the browser.
	Open bool
	// KeyFile keeps the key of the session cookie across runs; "" is a
	// key of this run alone.
	KeyFile string
}

// NewUIOptions returns the defaults of `kubectl fleet ui`.
func NewUIOptions(root *RootOptions) *UIOptions {
	o := &UIOptions{RootOptions: root, WalkFlags: NewWalkFlags(), Open: true}
	if dir, err := os.UserCacheDir(); err == nil {
		o.KeyFile = filepath.Join(dir, "kubectl-fleet", "ui-session.key")
	}
	return o
}

// NewCmdUI builds `kubectl fleet ui`.
func NewCmdUI(root *RootOptions) *cobra.Command {
	o := NewUIOptions(root)
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the live fleet as a map in the browser",
		Long: templates.LongDesc(`
			Serve the fleet as a live map in the browser: each master a frame
			holding its tenants, each cluster coloured and patterned by its worst
			health across every provider, with drift, freezes, unreachable
			clusters and cycles marked.

			The fleet comes from the walk and the watch of tree --watch, with the
			same flags. The page gets a snapshot, then every change as it
			happens; it reconnects by itself and resumes where it was.

			The server is read-only and listens on 127.0.0.1, on a free port
			unless --listen says otherwise. It prints the page's address with a
			one-time token, which the browser exchanges for a cookie, and opens
			the browser unless --open=false. Listening on an address other hosts
			reach needs TLS and a token file, as mcp --transport http does.`),
		Example: templates.Examples(`
			# The fleet below the current context, in the browser
			kubectl fleet ui

			# On a port of your choice, without opening a browser
			kubectl fleet ui --listen 127.0.0.1:8080 --open=false

			# The aws environment only
			kubectl fleet ui --env aws`),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	o.WalkFlags.AddFlags(f)
	o.ViewFlags.AddFlags(cmd, drift.ChecksOf(root.Providers))
	// The map marks drift: on unless --drift=false.
	o.Drift = true
	f.Lookup(flagDrift).DefValue = "true"
	f.StringVar(&o.Listen, flagListen, "127.0.0.1:0", "The address to listen on, HOST:PORT (port 0 picks a free one)")
	f.StringVar(&o.TLSCertFile, flagTLSCert, "", "Serve HTTPS with this certificate")
	f.StringVar(&o.TLSKeyFile, flagTLSKey, "", "The private key of --tls-cert-file")
	f.StringVar(&o.TokenFile, flagTokenFile, "", "A file holding a token the page's address and API clients may carry (Authorization: Bearer TOKEN) as often as they like")
	f.BoolVar(&o.Open, flagOpen, o.Open, "Open the page in the browser")
	return cmd
}

// Validate checks the flags, one message per problem.
func (o *UIOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	errs = append(errs, o.ViewFlags.Validate()...)
	errs = append(errs, o.Endpoint.Validate()...)
	return errors.Join(errs...)
}

// Run listens, says where, walks the fleet and serves it, live, until
// interrupted.
func (o *UIOptions) Run(ctx context.Context) error {
	if err := o.GitFlags.Open(ctx); err != nil {
		return err
	}
	bearer, err := httpserve.ReadToken(o.TokenFile)
	if err != nil {
		return err
	}
	key, keyErr := sessionKey(o.KeyFile)
	if keyErr != nil {
		fmt.Fprintf(o.ErrOut, "warning: %v: the page will not survive a restart of the server\n", keyErr)
	}
	token, err := randomHex(16)
	if err != nil {
		return err
	}
	ln, scheme, err := o.Endpoint.Open()
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		// Every address: the page is this machine's, by its name.
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	epoch, err := randomHex(4)
	if err != nil {
		_ = ln.Close()
		return err
	}
	stream := ui.NewStream(epoch)
	listenHost, _, _ := net.SplitHostPort(o.Listen)
	handler := ui.NewHandler(ui.Config{
		Stream: stream, Token: token, BearerToken: bearer, Key: key, Port: port,
		LoopbackOnly: httpserve.Loopback(listenHost), Secure: scheme == "https",
		Describe: o.describeJSON, DescribeTimeout: o.Timeout + 30*time.Second,
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- httpserve.Serve(ctx, ln, handler) }()

	page := fmt.Sprintf("%s://%s/?token=%s", scheme, net.JoinHostPort(host, port), token)
	fmt.Fprintf(o.Out, "Serving the fleet at %s\nPress Ctrl-C to stop.\n", page)
	if o.Open {
		if err := openBrowser(page); err != nil {
			fmt.Fprintf(o.ErrOut, "could not open a browser (%v): open the address above\n", err)
		}
	}

	opts := o.Options(nil, -1)
	opts.KeepConnections, o.retain = true, true
	res, err := o.walk(ctx, opts, o.probes()...)
	if err != nil {
		cancel()
		return errors.Join(err, <-served)
	}
	o.markFrozen(res)
	var nodes []*fleet.Node
	res.Root.Walk(func(n *fleet.Node) { nodes = append(nodes, n) })
	o.annotate(o.Providers, res.Root, nodes, time.Now())
	var analyze func(*fleet.Node)
	if o.Drift {
		analyze = func(n *fleet.Node) { drift.Find([]*fleet.Node{n}, o.options(time.Now())) }
	}
	w := watch.New(res, watch.Options[*reach.Cluster]{
		Walk: o.withProviders(opts), Probes: o.probesWith(o.probes()), Analyze: analyze, Emit: stream.Add,
	})
	go ui.Follow(ctx, w, stream, ui.Marks{Columns: o.Providers.Presentation().Columns, Frozen: ops.FreezesOn, Drift: driftKinds}, uiBatch)
	err = w.Run(ctx)
	cancel()
	if serr := <-served; serr != nil && err == nil {
		return serr
	}
	return err
}

// driftKinds are the kinds of n's drift findings, each once.
func driftKinds(n *fleet.Node) []string {
	var kinds []string
	for _, f := range drift.Findings(n) {
		if k := string(f.Kind); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// describeJSON is what `kubectl fleet describe PATH -o json` prints: the
// page's side panel.
func (o *RootOptions) describeJSON(ctx context.Context, path string) (any, error) {
	out, err := o.describeAs(ctx, path, outputJSON, false)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// sessionKey is the key of the session cookie, kept in file (0600) so
// that a page survives a restart of the server; a key of this run alone
// when it cannot be kept.
func sessionKey(file string) ([]byte, error) {
	fresh := func() []byte {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	if file == "" {
		return fresh(), errors.New("no cache directory to keep the session key in")
	}
	if data, err := os.ReadFile(file); err == nil && len(data) >= 32 {
		return data, nil
	}
	key := fresh()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return key, err
	}
	if err := os.WriteFile(file, key, 0o600); err != nil {
		return key, err
	}
	return key, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// openBrowser opens url in the user's browser: $BROWSER when set (the
// user's own choice), else the system's opener. It does not wait.
func openBrowser(url string) error {
	var name string
	var args []string
	switch {
	case os.Getenv("BROWSER") != "":
		name = os.Getenv("BROWSER")
	case runtime.GOOS == "darwin":
		name = "open"
	case runtime.GOOS == "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		name = "xdg-open"
	}
	cmd := exec.Command(name, append(args, url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
