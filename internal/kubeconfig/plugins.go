package kubeconfig

import (
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Plugins decides which exec credential plugins a kubeconfig read from a
// Secret may run. Its sources are the operator's own: kubectl's kuberc
// (credentialPluginPolicy and credentialPluginAllowlist), kubectl fleet's
// config file and --allow-exec. The zero value allows none.
//
// A command is matched as client-go matches kuberc's allowlist: the
// plugin's command and each entry are resolved with exec.LookPath and the
// resolved paths compared, so an entry "aws" allows the aws that PATH
// finds, named "aws" or by that path, and nothing else named aws.
type Plugins struct {
	// Kuberc is the policy of the user's kuberc; KubercFile the file it
	// was read from ("" when none was).
	Kuberc     clientcmdapi.PluginPolicy
	KubercFile string
	// Allowed are kubectl fleet's own allowances: --allow-exec and the
	// config file's credentialPlugins.
	Allowed []Allowed
	// LookPath resolves a command as exec.LookPath does; nil is
	// exec.LookPath.
	LookPath func(string) (string, error)
}

// Allowed allows one plugin, by command, maybe only for some servers.
type Allowed struct {
	// Command is a bare name, found on PATH, or a path.
	Command string
	// Servers, when set, are the server hosts the plugin may run for, as
	// shell patterns matched against the host name ("*.eks.amazonaws.com":
	// a * matches any characters, dots too). Empty: every server.
	Servers []string
	// From says where the allowance was made: "--allow-exec", or the
	// config file's path.
	From string
}

// DefaultKuberc is how a refusal names the kuberc to edit when none was
// read.
const DefaultKuberc = "~/.kube/kuberc"

// kubercAllowsAll is whether the user's kuberc lets their own kubeconfigs
// run any plugin: no policy, or AllowAll. For a kubeconfig read from a
// Secret that still means deny.
func (p Plugins) kubercAllowsAll() bool {
	return p.Kuberc.PolicyType == "" || p.Kuberc.PolicyType == clientcmdapi.PluginPolicyAllowAll
}

func (p Plugins) lookPath(command string) (string, error) {
	if p.LookPath != nil {
		return p.LookPath(command)
	}
	return exec.LookPath(command)
}

// resolves reports whether entry names the plugin that resolved is: both
// resolved by LookPath to one path.
func (p Plugins) resolves(entry, resolved string) bool {
	if entry == "" {
		return false
	}
	got, err := p.lookPath(entry)
	return err == nil && filepath.Clean(got) == filepath.Clean(resolved)
}

// Decision is what the policy decided for one plugin.
type Decision struct {
	// Path is the plugin's resolved path: the one command that may run.
	Path string
	// By says what allowed it: "--allow-exec", a file.
	By string
}

// allow decides on command, named by a kubeconfig from a Secret for
// server. It returns the resolved path and what allowed it, or why not:
// a reason that names the entry that would allow it.
func (p Plugins) allow(command, server string) (Decision, string) {
	if command == "" {
		return Decision{}, "is an exec credential plugin with no command"
	}
	quoted := fmt.Sprintf("%q", command)
	if p.Kuberc.PolicyType == clientcmdapi.PluginPolicyDenyAll {
		return Decision{}, fmt.Sprintf("is an exec credential plugin (%s); your kuberc (%s) sets credentialPluginPolicy: DenyAll, so no plugin runs", quoted, p.kubercName())
	}
	resolved, err := p.lookPath(command)
	if err != nil {
		if p.named(command) {
			return Decision{}, fmt.Sprintf("is an exec credential plugin (%s) that is allowed but not found: install it or put it on your PATH", quoted)
		}
		return Decision{}, fmt.Sprintf("is an exec credential plugin (%s), not found on your PATH and not allowed; %s", quoted, p.hint(command))
	}
	host := ServerHost(server)
	// A tie holds against every other allowance: once an entry ties the
	// plugin to servers, it runs for those servers alone, whatever
	// --allow-exec, another entry or kuberc say.
	match, tiedTo := p.tied(resolved, host)
	if match != nil {
		return Decision{Path: resolved, By: match.From}, ""
	}
	if len(tiedTo) > 0 {
		return Decision{}, fmt.Sprintf("is an exec credential plugin (%s) that %s allows only for servers %s; this kubeconfig's server is %s: add it to that entry's servers if you trust it", quoted, tiedTo[0].From, strings.Join(tiedTo[0].Servers, ", "), host)
	}
	for _, a := range p.Allowed {
		if p.resolves(a.Command, resolved) {
			return Decision{Path: resolved, By: a.From}, ""
		}
	}
	if p.Kuberc.PolicyType == clientcmdapi.PluginPolicyAllowlist {
		for _, e := range p.Kuberc.Allowlist {
			if p.resolves(e.Command, resolved) {
				return Decision{Path: resolved, By: p.kubercName()}, ""
			}
		}
	}
	return Decision{}, fmt.Sprintf("is an exec credential plugin (%s); running a command named by a Secret is refused unless you allow it: %s", quoted, p.hint(command))
}

// tied is the entry that ties the plugin resolved to host's servers, or,
// when none does, the entries that tie it to other servers.
func (p Plugins) tied(resolved, host string) (*Allowed, []Allowed) {
	var tiedTo []Allowed
	for _, a := range p.Allowed {
		if len(a.Servers) > 0 && p.resolves(a.Command, resolved) {
			if matchHost(a.Servers, host) {
				return &a, nil
			}
			tiedTo = append(tiedTo, a)
		}
	}
	return nil, tiedTo
}

// named reports whether an entry names command (unresolved): it is
// allowed, were it found.
func (p Plugins) named(command string) bool {
	for _, a := range p.Allowed {
		if filepath.Base(a.Command) == filepath.Base(command) {
			return true
		}
	}
	for _, e := range p.Kuberc.Allowlist {
		if filepath.Base(e.Command) == filepath.Base(command) {
			return true
		}
	}
	return false
}

// hint names the entry that would allow command.
func (p Plugins) hint(command string) string {
	policy := ""
	if p.Kuberc.PolicyType != clientcmdapi.PluginPolicyAllowlist {
		policy = " with credentialPluginPolicy: Allowlist"
	}
	return fmt.Sprintf("add {command: %s} to credentialPluginAllowlist in %s%s, or --allow-exec %s", command, p.kubercName(), policy, command)
}

func (p Plugins) kubercName() string {
	if p.KubercFile == "" {
		return DefaultKuberc
	}
	return p.KubercFile
}

// ServerHost is the host name of a server URL, lower case, without its
// port or a trailing dot; "" when the URL does not parse.
func ServerHost(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// matchHost reports whether host matches one of patterns
// (ValidHostPattern): the host itself, "*." and a domain (any host below
// that domain, at any depth), or, for an IP address, a CIDR.
func matchHost(patterns []string, host string) bool {
	if host == "" {
		return false
	}
	ip := net.ParseIP(host)
	for _, p := range patterns {
		p = strings.TrimSuffix(strings.ToLower(p), ".")
		switch {
		case strings.Contains(p, "/"):
			if _, cidr, err := net.ParseCIDR(p); err == nil && ip != nil && cidr.Contains(ip) {
				return true
			}
		case strings.HasPrefix(p, "*."):
			if ip == nil && strings.HasSuffix(host, p[1:]) {
				return true
			}
		case ip != nil:
			if pip := net.ParseIP(p); pip != nil && pip.Equal(ip) {
				return true
			}
		case p == host:
			return true
		}
	}
	return false
}

// ValidHostPattern says what is wrong with a servers pattern, or "": a
// host name, "*." and a domain, an IP address, or a CIDR. No other
// wildcard: "34.118.10.*" would match 34.118.10.evil.example.
func ValidHostPattern(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.Contains(p, "/"):
		if _, _, err := net.ParseCIDR(p); err != nil {
			return "is not a valid CIDR (10.0.0.0/8)"
		}
		return ""
	case net.ParseIP(p) != nil:
		return ""
	case strings.ContainsAny(strings.TrimPrefix(p, "*."), "*?[]\\"):
		return "may have one wildcard only, as a leading \"*.\" (*.eks.amazonaws.com); for addresses give a CIDR (34.118.0.0/16)"
	case strings.ContainsAny(p, ":@ "):
		return "must be a host name, \"*.\" and a domain, an IP address or a CIDR, without scheme, port or path"
	}
	return ""
}

// InClusterHost reports whether host is an address only a cluster's own
// network resolves: a Service name (NAME.NS.svc, NAME.NS.svc.cluster.local)
// or a single-label name (kube-apiserver).
func InClusterHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || net.ParseIP(host) != nil || host == "localhost" {
		return false
	}
	return !strings.Contains(host, ".") || strings.HasSuffix(host, ".svc") || strings.HasSuffix(host, ".svc.cluster.local")
}

// allowOwn decides on command, a plugin of the operator's own
// configuration (from), run for server, which an untrusted object chose:
// as kubectl decides for the plugins of their own kubeconfig, by kuberc,
// and, where an entry of theirs ties the plugin to servers, only for
// those (a tie holds against every allowance). It returns the resolved
// path, or why not.
func (p Plugins) allowOwn(command, from, server string) (Decision, string) {
	if p.Kuberc.PolicyType == clientcmdapi.PluginPolicyDenyAll {
		return Decision{}, fmt.Sprintf("is refused: your kuberc (%s) sets credentialPluginPolicy: DenyAll", p.kubercName())
	}
	resolved, err := p.lookPath(command)
	if err != nil {
		return Decision{}, "is not found on your PATH: install it or give its path"
	}
	host := ServerHost(server)
	if match, tiedTo := p.tied(resolved, host); match == nil && len(tiedTo) > 0 {
		return Decision{}, fmt.Sprintf("is tied by %s to servers %s; this server is %s: add it to that entry's servers if you trust it", tiedTo[0].From, strings.Join(tiedTo[0].Servers, ", "), host)
	}
	if p.Kuberc.PolicyType != clientcmdapi.PluginPolicyAllowlist {
		return Decision{Path: resolved, By: from}, ""
	}
	for _, e := range p.Kuberc.Allowlist {
		if p.resolves(e.Command, resolved) {
			return Decision{Path: resolved, By: p.kubercName()}, ""
		}
	}
	return Decision{}, fmt.Sprintf("is not in the credentialPluginAllowlist of your kuberc (%s), which sets credentialPluginPolicy: Allowlist: add {command: %s} to it", p.kubercName(), command)
}

// Decide is what the policy decides of command, an exec plugin that a
// kubeconfig read from a Secret names for server: the plugin's resolved
// path and what allows it, or why not, naming the entry that would
// allow it (check reports it before any walk runs the plugin).
func (p Plugins) Decide(command, server string) (Decision, string) {
	return p.allow(command, server)
}

// Find resolves command as the policy does: its path, or why it is not
// found.
func (p Plugins) Find(command string) (string, error) { return p.lookPath(command) }
