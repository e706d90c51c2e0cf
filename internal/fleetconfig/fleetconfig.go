// Package fleetconfig reads kubectl fleet's own settings file
// (~/.kube/fleet.yaml, or --fleet-config): the credential plugins the
// operator allows for kubeconfigs read from Secrets, tied to servers;
// which credentials a walk uses; the routes to private clusters. It is the
// operator's own file, like their kubeconfig and kuberc, and kept apart
// from kuberc, which kubectl decodes strictly.
package fleetconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// APIVersion and Kind of the file.
const (
	APIVersion = "fleet.kubectl-fleet.io/v1alpha1"
	Kind       = "FleetConfig"
)

// DefaultFile is the file read when --fleet-config names none, under
// the home directory.
var DefaultFile = filepath.Join(".kube", "fleet.yaml")

// Config is the file.
type Config struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Credentials is the default of --credentials: admin, user or
	// user,admin.
	Credentials string `json:"credentials,omitempty"`
	// CredentialPlugins are the exec credential plugins kubeconfigs read
	// from Secrets may run, beside kuberc's allowlist and --allow-exec.
	CredentialPlugins []Plugin `json:"credentialPlugins,omitempty"`
	// Routes say how to reach the clusters of some paths.
	Routes []Route `json:"routes,omitempty"`
	// Providers are the settings of integrations, each under its name
	// (providers.clusterprofile): each provider decodes its own.
	Providers map[string]json.RawMessage `json:"providers,omitempty"`

	// File is where the config was read from; "" when none was.
	File string `json:"-"`
}

// Plugin allows one plugin.
type Plugin struct {
	// Command is a bare name, found on PATH, or a path: matched as kuberc's
	// credentialPluginAllowlist entries are.
	Command string `json:"command"`
	// Servers, when set, are the only server hosts the plugin runs for
	// (shell patterns: "*.eks.amazonaws.com").
	Servers []string `json:"servers,omitempty"`
}

// Route says how to reach the clusters whose paths match Path.
type Route struct {
	// Path is a pattern of fleet paths: each segment a shell pattern, and
	// ** any number of segments ("aws/**": aws and everything below it).
	Path string `json:"path"`
	// Proxy is the proxy to connect through: socks5://, socks5h://,
	// http:// or https:// (HTTP CONNECT).
	Proxy string `json:"proxy,omitempty"`
	// Context, when set, is a context of the operator's own kubeconfig
	// that reaches the cluster instead of the kubeconfig its parent holds.
	Context string `json:"context,omitempty"`
}

// Load reads the config at file; "" reads DefaultFile under home, and
// none there is an empty config. A file named explicitly must exist.
func Load(file, home string) (*Config, error) {
	explicit := file != ""
	if !explicit {
		if home == "" {
			return &Config{}, nil
		}
		file = filepath.Join(home, DefaultFile)
	}
	data, err := os.ReadFile(file)
	switch {
	case !explicit && errors.Is(err, os.ErrNotExist):
		return &Config{}, nil
	case err != nil:
		return nil, fmt.Errorf("failed to read the fleet config: %w", err)
	}
	return Parse(file, data)
}

// Parse decodes data, the config read from file, strictly, and checks it.
func Parse(file string, data []byte) (*Config, error) {
	c := &Config{}
	// Case-sensitive and strict: a key in the wrong case, unknown or given
	// twice fails, rather than silently drop a route.
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("fleet config %s: %w", file, err)
	}
	strict, err := kjson.UnmarshalStrict(j, c)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet config %s: %w", file, err)
	}
	c.File = file
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("fleet config %s: %w", file, err)
	}
	return c, nil
}

func (c *Config) validate() error {
	var errs []error
	if c.APIVersion != APIVersion || c.Kind != Kind {
		errs = append(errs, fmt.Errorf("apiVersion and kind must be %s and %s", APIVersion, Kind))
	}
	if _, err := ParseCredentials(c.Credentials); err != nil {
		errs = append(errs, fmt.Errorf("credentials: %w", err))
	}
	for i, p := range c.CredentialPlugins {
		if p.Command == "" || filepath.Clean(p.Command) != p.Command {
			errs = append(errs, fmt.Errorf("credentialPlugins[%d].command: give a plugin's name or clean path", i))
		}
		for j, s := range p.Servers {
			if why := kubeconfig.ValidHostPattern(s); why != "" {
				errs = append(errs, fmt.Errorf("credentialPlugins[%d].servers[%d] %s", i, j, why))
			}
		}
	}
	for i, r := range c.Routes {
		if err := validPattern(r.Path); err != nil {
			errs = append(errs, fmt.Errorf("routes[%d].path: %w", i, err))
		}
		if r.Proxy == "" && r.Context == "" {
			errs = append(errs, fmt.Errorf("routes[%d]: give a proxy, a context, or both", i))
		}
		if r.Proxy != "" {
			if err := ValidProxy(r.Proxy); err != nil {
				errs = append(errs, fmt.Errorf("routes[%d].proxy: %w", i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ValidProxy checks a proxy URL: socks5, socks5h, http or https, a host,
// nothing else.
func ValidProxy(proxy string) error {
	u, err := url.Parse(proxy)
	if err != nil || u.Host == "" {
		return errors.New("is not a URL (socks5://HOST:PORT or http://HOST:PORT)")
	}
	switch u.Scheme {
	case "socks5", "socks5h", "http", "https":
	default:
		return fmt.Errorf("scheme %q is not supported: use socks5, socks5h, http or https", u.Scheme)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return errors.New("must be scheme://HOST:PORT, without a path, query or fragment")
	}
	return nil
}

func validPattern(p string) error {
	if p == "" {
		return errors.New("is empty")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			return errors.New("has an empty segment")
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("segment %q is not a valid pattern", seg)
		}
	}
	return nil
}

// Plugins are the config's credential plugins as the kubeconfig policy
// takes them.
func (c *Config) Plugins() []kubeconfig.Allowed {
	var out []kubeconfig.Allowed
	for _, p := range c.CredentialPlugins {
		out = append(out, kubeconfig.Allowed{Command: p.Command, Servers: p.Servers, From: c.File})
	}
	return out
}

// RouteFor is the first route whose pattern matches the cluster at path
// p (fleet.DisplayPath form: "aws/team-a"), or nil.
func (c *Config) RouteFor(p string) *Route {
	if p == "" {
		return nil
	}
	for i := range c.Routes {
		if Match(c.Routes[i].Path, p) {
			return &c.Routes[i]
		}
	}
	return nil
}

// Match reports whether path p matches pattern: segment by segment, each
// a shell pattern matched against the segment as given (namespace:name,
// or the name) and against the name alone: "team-a" matches team-a of
// every namespace, "tenants:team-a" only that one; ** matches any number
// of segments, none included. The walk gives the cluster's own segment
// as namespace:name.
func Match(pattern, p string) bool {
	return match(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func match(pattern, segs []string) bool {
	if len(pattern) == 0 {
		return len(segs) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if match(pattern[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 || !matchSegment(pattern[0], segs[0]) {
		return false
	}
	return match(pattern[1:], segs[1:])
}

func matchSegment(pattern, seg string) bool {
	if ok, _ := path.Match(pattern, seg); ok {
		return true
	}
	if s, err := fleet.ParsePath(seg); err == nil && len(s) == 1 {
		ok, _ := path.Match(pattern, s[0].Name)
		return ok
	}
	return false
}

// ParseCredentials parses a --credentials value: admin (the default, ""),
// user, or user,admin.
func ParseCredentials(s string) (kubeconfig.Credentials, error) {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	switch strings.Join(parts, ",") {
	case "", "admin":
		return kubeconfig.Credentials{}, nil
	case "user":
		return kubeconfig.Credentials{User: true}, nil
	case "user,admin":
		return kubeconfig.Credentials{User: true, Admin: true}, nil
	}
	return kubeconfig.Credentials{}, fmt.Errorf("%q is not one of admin, user, user,admin", s)
}
