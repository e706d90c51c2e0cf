package kubeconfig

import (
	"errors"
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// ErrRefused marks a kubeconfig that the policy refuses to use.
var ErrRefused = errors.New("refused by the kubeconfig policy")

// ErrInvalid marks a kubeconfig that cannot be used because it is malformed.
var ErrInvalid = errors.New("invalid kubeconfig")

// Source names where a kubeconfig came from, for error messages.
type Source struct {
	// Kind of the object, when not a Secret (e.g. "ManagedCluster", whose
	// fields give a cluster's URL and CA).
	Kind string
	// Namespace and Name of the Secret (or object of Kind).
	Namespace, Name string
	// Key is the data key of the Secret that holds the kubeconfig; "" when
	// errors name fields by their path from the Secret's data.
	Key string
}

func (s Source) String() string {
	switch {
	case s.Kind == "":
		return fmt.Sprintf("secret %s/%s", s.Namespace, s.Name)
	case s.Namespace == "":
		return s.Kind + " " + s.Name
	}
	return s.Kind + " " + s.Namespace + "/" + s.Name
}

// FieldError says which field of which Secret made a kubeconfig unusable.
type FieldError struct {
	Source Source
	// Field is the path of the offending field, e.g. users[admin].exec.
	Field string
	// Reason says what is wrong, without quoting the field's value.
	Reason string
	kind   error
}

func (e *FieldError) Error() string {
	// Entry names in Field come from the Secret: escaped, so that a
	// hostile name cannot write to the terminal the error is shown on.
	if e.Source.Key == "" { // Field is a path from the Secret's data
		return fmt.Sprintf("%s: field %s: %s", e.Source, escape.String(e.Field), e.Reason)
	}
	return fmt.Sprintf("%s, key %q: field %s: %s", e.Source, e.Source.Key, escape.String(e.Field), e.Reason)
}

// Unwrap lets callers test with errors.Is(err, ErrRefused) or ErrInvalid.
func (e *FieldError) Unwrap() error { return e.kind }

// Policy decides which parts of an untrusted kubeconfig may be used.
// The zero value is the strictest policy and the default.
type Policy struct {
	// Plugins decides which exec credential plugins a kubeconfig read
	// from a Secret may run. Nothing else re-enables a refused field.
	Plugins Plugins
	// OnExec, when set, is called before an allowed exec plugin is
	// configured for a connection, so the operator can be told.
	OnExec func(src Source, command string, d Decision)
	// Credentials says which kubeconfig a walk reaches a cluster by, when
	// its parent holds several.
	Credentials Credentials
	// OnRefusedExec, when set, is called when a plugin is refused while
	// the user's kuberc allows every plugin (no policy, or AllowAll): that
	// policy is for the user's own kubeconfigs, not for those read from
	// Secrets, and the operator is told so.
	OnRefusedExec func()
}

// Credentials says which of a cluster's kubeconfigs a walk reaches it
// by, where its parent holds several: an admin one (CAPI's
// <cluster>-kubeconfig, credentials of the cluster's own) and one for
// people (a provider's user kubeconfig, which runs a plugin that logs in
// as the operator). The zero value is the admin one.
type Credentials struct {
	// User reads the user kubeconfig; with Admin too, the admin one where
	// there is no user kubeconfig.
	User, Admin bool
}

func (c Credentials) String() string {
	switch {
	case c.User && c.Admin:
		return "user,admin"
	case c.User:
		return "user"
	}
	return "admin"
}

// What reached a cluster (CredentialOf).
const (
	// CredentialAdmin is a client certificate: the cluster's own
	// credentials (CAPI's admin kubeconfig).
	CredentialAdmin = "admin"
	// CredentialUser is an exec plugin: the operator's own identity.
	CredentialUser = "user"
	// CredentialToken is a bearer token (a cloud's short-lived token, a
	// ServiceAccount's).
	CredentialToken = "token"
	// CredentialPassword is basic authentication.
	CredentialPassword = "password"
	// CredentialKubeconfig is a context of the operator's own kubeconfig.
	CredentialKubeconfig = "kubeconfig"
)

// CredentialOf names what cfg, built by the policy, authenticates with.
func CredentialOf(cfg *rest.Config) string {
	switch {
	case cfg.ExecProvider != nil:
		return CredentialUser
	case len(cfg.CertData) > 0:
		return CredentialAdmin
	case cfg.BearerToken != "":
		return CredentialToken
	case cfg.Username != "":
		return CredentialPassword
	}
	return ""
}

// RESTConfig validates data, a kubeconfig from src, and returns a rest.Config
// built only from its inline, allowed fields.
func (p Policy) RESTConfig(src Source, data []byte) (*rest.Config, error) {
	cfg, err := load(src, data)
	if err != nil {
		return nil, err
	}
	return p.fromConfig(src, cfg)
}

// RESTConfigFor validates cfg, a kubeconfig made in memory from another
// format read from src (an Argo CD cluster Secret's config), and returns a
// rest.Config as RESTConfig does: the same policy. A refusal names the
// field by its path in that format: where maps each kubeconfig field path
// (clusters[c].insecure-skip-tls-verify) to it.
func (p Policy) RESTConfigFor(src Source, cfg *clientcmdapi.Config, where func(field string) string) (*rest.Config, error) {
	out, err := p.fromConfig(src, cfg)
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.Field = where(fe.Field)
	}
	return out, err
}

// Refused is a refusal of the field of the kubeconfig (or of the format it
// is made from) read from src; reason says why without quoting the value.
func Refused(src Source, field, reason string) error {
	return &FieldError{Source: src, Field: field, Reason: reason, kind: ErrRefused}
}

// Invalid says the field of what was read from src cannot be used as it is.
func Invalid(src Source, field, reason string) error {
	return &FieldError{Source: src, Field: field, Reason: reason, kind: ErrInvalid}
}

// load decodes data, a kubeconfig from src.
func load(src Source, data []byte) (*clientcmdapi.Config, error) {
	if len(data) == 0 {
		return nil, &FieldError{Source: src, Field: "data." + src.Key, Reason: "is empty or missing", kind: ErrInvalid}
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		// The decoder's message can quote the input, which may hold secrets:
		// say what is wrong without it.
		return nil, &FieldError{Source: src, Field: "data." + src.Key, Reason: "is not a valid kubeconfig (it could not be decoded)", kind: ErrInvalid}
	}
	return cfg, nil
}

func (p Policy) fromConfig(src Source, cfg *clientcmdapi.Config) (*rest.Config, error) {
	ctxName, kctx, err := currentContext(src, cfg)
	if err != nil {
		return nil, err
	}
	cluster, user, err := entries(src, cfg, ctxName, kctx)
	if err != nil {
		return nil, err
	}
	if err := checkCluster(src, kctx.Cluster, cluster); err != nil {
		return nil, err
	}
	decision, err := p.checkUser(src, kctx.AuthInfo, user, cluster.Server)
	if err != nil {
		return nil, err
	}
	// Last: what is refused is said first, whatever else is wrong.
	if err := checkCA(src, kctx.Cluster, cluster); err != nil {
		return nil, err
	}
	out := &rest.Config{
		Host: cluster.Server,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: cluster.TLSServerName,
			CAData:     cluster.CertificateAuthorityData,
			CertData:   user.ClientCertificateData,
			KeyData:    user.ClientKeyData,
		},
		BearerToken: user.Token,
		Username:    user.Username,
		Password:    user.Password,
	}
	if user.Exec != nil {
		exec := pinned(*user.Exec, decision.Path)
		exec.Config = nil
		out.ExecProvider = exec
		if p.OnExec != nil {
			p.OnExec(src, user.Exec.Command, decision)
		}
	}
	return out, nil
}

// pinned is exec made to run path alone, the command the policy resolved
// and allowed, which client-go checks again (its PluginPolicy, as kubectl
// sets it from kuberc); the plugin never gets a terminal, and the install
// hint, text of whoever wrote the kubeconfig, which client-go would print
// as it is, is dropped.
func pinned(exec clientcmdapi.ExecConfig, path string) *clientcmdapi.ExecConfig {
	exec.Command = path
	exec.PluginPolicy = clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: path}}}
	exec.InteractiveMode = clientcmdapi.NeverExecInteractiveMode
	exec.StdinUnavailable = true
	exec.InstallHint = ""
	return &exec
}

func currentContext(src Source, cfg *clientcmdapi.Config) (string, *clientcmdapi.Context, error) {
	name := cfg.CurrentContext
	if name == "" {
		if len(cfg.Contexts) != 1 {
			return "", nil, &FieldError{Source: src, Field: "current-context", Reason: fmt.Sprintf("is not set and the kubeconfig has %d contexts", len(cfg.Contexts)), kind: ErrInvalid}
		}
		for n := range cfg.Contexts {
			name = n
		}
	}
	kctx, ok := cfg.Contexts[name]
	if !ok || kctx == nil {
		return "", nil, &FieldError{Source: src, Field: "current-context", Reason: "names a context that the kubeconfig does not define", kind: ErrInvalid}
	}
	return name, kctx, nil
}

func checkCluster(src Source, name string, c *clientcmdapi.Cluster) error {
	if v := clusterViolations(src, name, c); len(v) > 0 {
		return v[0]
	}
	return checkServer(src, name, c)
}

// checkCA checks certificate-authority-data: when given, PEM certificates
// that parse. A bundle that holds none would fail only when the connection
// is built, naming neither the Secret nor the field.
func checkCA(src Source, name string, c *clientcmdapi.Cluster) error {
	if len(c.CertificateAuthorityData) == 0 {
		return nil
	}
	if _, err := certutil.ParseCertsPEM(c.CertificateAuthorityData); err != nil {
		return &FieldError{Source: src, Field: fmt.Sprintf("clusters[%s].certificate-authority-data", name), Reason: "holds no PEM certificate that parses", kind: ErrInvalid}
	}
	return nil
}

// clusterViolations lists every refused field of a cluster entry.
func clusterViolations(src Source, name string, c *clientcmdapi.Cluster) []*FieldError {
	var out []*FieldError
	refuse := func(f, reason string) {
		out = append(out, &FieldError{Source: src, Field: fmt.Sprintf("clusters[%s].%s", name, f), Reason: reason, kind: ErrRefused})
	}
	if c.CertificateAuthority != "" {
		refuse("certificate-authority", "is a local file path; only certificate-authority-data is accepted in a kubeconfig read from a Secret")
	}
	if c.InsecureSkipTLSVerify {
		refuse("insecure-skip-tls-verify", "turns off server certificate checks; it is never honoured for a kubeconfig read from a Secret")
	}
	if c.ProxyURL != "" {
		refuse("proxy-url", "would route the connection through a proxy chosen by the Secret's author")
	}
	return out
}

func checkServer(src Source, name string, c *clientcmdapi.Cluster) error {
	field := fmt.Sprintf("clusters[%s].server", name)
	if c.Server == "" {
		return &FieldError{Source: src, Field: field, Reason: "is empty", kind: ErrInvalid}
	}
	u, err := url.Parse(c.Server)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return &FieldError{Source: src, Field: field, Reason: "is not an http(s) URL", kind: ErrInvalid}
	}
	if u.Scheme != "https" {
		return &FieldError{Source: src, Field: field, Reason: "is a plain http:// URL: credentials would cross the network in the clear; only https:// is accepted in a kubeconfig read from a Secret", kind: ErrRefused}
	}
	if u.User != nil {
		return &FieldError{Source: src, Field: field, Reason: "holds user information (user:password@): credentials in a URL end up in logs; it is refused in a kubeconfig read from a Secret", kind: ErrRefused}
	}
	return nil
}

// checkUser checks a user entry for a kubeconfig whose server is server,
// and returns what the policy decided of its exec plugin, if it has one.
func (p Policy) checkUser(src Source, name string, u *clientcmdapi.AuthInfo, server string) (Decision, error) {
	d, v := p.userViolations(src, name, u, server)
	if len(v) > 0 {
		if v[0].Field == "users["+name+"].exec" && p.OnRefusedExec != nil && p.Plugins.kubercAllowsAll() {
			p.OnRefusedExec()
		}
		return d, v[0]
	}
	return d, nil
}

// userViolations lists every refused field of a user entry, for a
// kubeconfig whose server is server, and what the policy decided of its
// exec plugin.
func (p Policy) userViolations(src Source, name string, u *clientcmdapi.AuthInfo, server string) (Decision, []*FieldError) {
	var out []*FieldError
	refuse := func(f, reason string) {
		out = append(out, &FieldError{Source: src, Field: fmt.Sprintf("users[%s].%s", name, f), Reason: reason, kind: ErrRefused})
	}
	const file = "is a local file path; only inline data is accepted in a kubeconfig read from a Secret"
	var d Decision
	if u.Exec != nil {
		var why string
		if d, why = p.Plugins.allow(u.Exec.Command, server); why != "" {
			refuse("exec", why)
		}
	}
	if u.Exec != nil && len(u.Exec.Env) > 0 {
		refuse("exec.env", "sets the environment of an exec credential plugin; refused even for an allowed plugin")
	}
	if u.AuthProvider != nil {
		refuse("auth-provider", "is an auth-provider plugin; plugins named by a Secret are refused")
	}
	if u.TokenFile != "" {
		refuse("tokenFile", file)
	}
	if u.ClientCertificate != "" {
		refuse("client-certificate", file)
	}
	if u.ClientKey != "" {
		refuse("client-key", file)
	}
	if u.Impersonate != "" || u.ImpersonateUID != "" || len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0 {
		refuse("as", "asks for impersonation; identities chosen by a Secret are refused")
	}
	return d, out
}

// RESTConfigWithPlugin returns a rest.Config for a cluster whose entry
// was read from src (a ClusterProfile's access provider: untrusted, and
// checked as a Secret's cluster entry is) and that is reached with exec,
// an exec credential plugin of the operator's own configuration (the
// ClusterProfile provider file, named by from). That plugin runs as
// kubectl runs the plugins of the operator's own kubeconfig: under
// kuberc's credentialPluginPolicy alone (every plugin when kuberc sets
// none or AllowAll, the allowlist's when it sets Allowlist, none with
// DenyAll). Its arguments, environment and cluster config are the
// caller's to choose; only the command is resolved and pinned, and it
// never gets a terminal. Since the untrusted object chose the server the
// plugin's credential is sent to, a credentialPlugins entry of the
// operator's that ties the plugin to servers holds here too. A refusal
// names the field by where.
func (p Policy) RESTConfigWithPlugin(src Source, cluster *clientcmdapi.Cluster, exec *clientcmdapi.ExecConfig, from string, where func(field string) string) (*rest.Config, error) {
	const name = "cluster"
	fail := func(fe *FieldError) (*rest.Config, error) {
		fe.Field = where(fe.Field)
		return nil, fe
	}
	var fe *FieldError
	if err := checkCluster(src, name, cluster); errors.As(err, &fe) {
		return fail(fe)
	}
	if err := checkCA(src, name, cluster); errors.As(err, &fe) {
		return fail(fe)
	}
	if exec == nil || exec.Command == "" {
		return nil, fmt.Errorf("%s: the exec config of %s has no command", src, from)
	}
	d, why := p.Plugins.allowOwn(exec.Command, from, cluster.Server)
	if why != "" {
		// src names from (the access provider of a provider file).
		return nil, fmt.Errorf("%s: the exec credential plugin %q %s: %w", src, exec.Command, why, ErrRefused)
	}
	plugin := pinned(*exec, d.Path)
	out := &rest.Config{
		Host: cluster.Server,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: cluster.TLSServerName,
			CAData:     cluster.CertificateAuthorityData,
		},
		ExecProvider: plugin,
	}
	if p.OnExec != nil {
		p.OnExec(src, exec.Command, d)
	}
	return out, nil
}
