package clusterprofile

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	kjson "sigs.k8s.io/json"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Providers is a provider file: the operator's own map from the names of
// access providers, as ClusterProfiles list them, to exec credential
// plugins, in the format of the upstream pkg/access package
// ({"providers": [{"name": …, "execConfig": {…}}]}).
type Providers struct {
	// Config is the file, as the upstream package reads it.
	Config access.Config
	// From names where it was read, in errors and as what allowed a
	// plugin to run: the file's path, or the fleet config's section.
	From string
}

// The apiVersions of the ExecCredential a plugin speaks that client-go
// supports.
var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// ReadProviders reads and checks the provider file at path.
func ReadProviders(path string) (*Providers, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the ClusterProfile provider file: %w", err)
	}
	return ParseProviders(data, path)
}

// ParseProviders decodes data, a provider file read from from, and checks
// it. Unlike upstream, which ignores what it does not know, it decodes
// strictly (a key unknown, in the wrong case or given twice fails), so
// that a misspelt policy does not silently let a profile's arguments in,
// or keep them out.
func ParseProviders(data []byte, from string) (*Providers, error) {
	return parse(data, from, from)
}

// parse is ParseProviders with errors prefixed by prefix.
func parse(data []byte, from, prefix string) (*Providers, error) {
	p := &Providers{From: from}
	strict, err := kjson.UnmarshalStrict(data, &p.Config)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", prefix, escape.OneLine(err.Error()))
	}
	if err := validate(&p.Config); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	return p, nil
}

// validate checks what upstream leaves to fail later, or never: each
// provider has a name of its own and a plugin to run, and its policies
// are ones upstream knows.
func validate(c *access.Config) error {
	if len(c.Providers) == 0 {
		return errors.New("providers: is empty: map at least one access provider to an exec credential plugin")
	}
	var errs []error
	fail := func(i int, field, reason string, args ...any) {
		errs = append(errs, fmt.Errorf("providers[%d].%s: %s", i, field, fmt.Sprintf(reason, args...)))
	}
	for i, p := range c.Providers {
		switch j := slices.IndexFunc(c.Providers[:i], func(o access.Provider) bool { return o.Name == p.Name }); {
		case p.Name == "":
			fail(i, "name", "is empty: give the name of an access provider, as ClusterProfiles list it")
		case j >= 0:
			fail(i, "name", "%s is also providers[%d]'s: give each access provider once", escape.String(p.Name), j)
		}
		switch e := p.ExecConfig; {
		case e == nil:
			fail(i, "execConfig", "is missing: give the exec credential plugin that logs in to this access provider's clusters")
		case e.Command == "":
			fail(i, "execConfig.command", "is empty: give the plugin's name or path")
		case !slices.Contains(execAPIVersions, e.APIVersion):
			fail(i, "execConfig.apiVersion", "must be one of %v: the ExecCredential version the plugin speaks", execAPIVersions)
		default:
			for k, env := range e.Env {
				if env.Name == "" {
					fail(i, fmt.Sprintf("execConfig.env[%d].name", k), "is empty")
				}
			}
		}
		switch p.ProfileSourcedCLIArgsPolicy {
		case "", access.ProfileSourcedCLIArgsPolicyAppend, access.ProfileSourcedCLIArgsPolicyIgnore:
		default:
			fail(i, "profileSourcedCLIArgsPolicy", "%s is not %s or %s", escape.String(string(p.ProfileSourcedCLIArgsPolicy)),
				access.ProfileSourcedCLIArgsPolicyAppend, access.ProfileSourcedCLIArgsPolicyIgnore)
		}
		switch p.ProfileSourcedEnvVarsPolicy {
		case "", access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace, access.ProfileSourcedEnvVarsPolicyIgnore:
		default:
			fail(i, "profileSourcedEnvVarsPolicy", "%s is not %s, %s or %s", escape.String(string(p.ProfileSourcedEnvVarsPolicy)),
				access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace, access.ProfileSourcedEnvVarsPolicyIgnore)
		}
	}
	return errors.Join(errs...)
}

// names are the providers' names, escaped, in the file's order.
func (p *Providers) names() []string {
	out := make([]string, len(p.Config.Providers))
	for i, pr := range p.Config.Providers {
		out[i] = escape.String(pr.Name)
	}
	return out
}

// provider is the file's provider of name; nil when none.
func (p *Providers) provider(name string) *access.Provider {
	for i := range p.Config.Providers {
		if p.Config.Providers[i].Name == name {
			return &p.Config.Providers[i]
		}
	}
	return nil
}
