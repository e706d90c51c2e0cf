package clusterprofile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// upstreamExample is the provider file of upstream's secretreader example
// (examples/controller-example/plugins/secretreader/provider-config.json).
const upstreamExample = `{
  "providers": [
    {
      "name": "secretreader",
      "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "args": null,
        "command": "./bin/secretreader-plugin",
        "env": null,
        "provideClusterInfo": true
      }
    }
  ]
}`

// A provider file is decoded strictly and checked: what upstream would
// ignore, or fail on only when a cluster is reached, fails at once and
// names the field.
func TestProviderFileIsStrict(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // "" for none
	}{
		{"upstream's example", upstreamExample, ""},
		{"policies", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1beta1","command":"p"},"profileSourcedCLIArgsPolicy":"Append","profileSourcedEnvVarsPolicy":"Replace"}]}`, ""},
		{"an unknown key", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p","provideClusterinfo":true}}]}`,
			`unknown field "providers[0].execConfig.provideClusterinfo"`},
		{"a key in the wrong case", `{"Providers":[]}`, `unknown field "Providers"`},
		{"a key twice", `{"providers":[{"name":"a","name":"b","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p"}}]}`, `duplicate field "providers[0].name"`},
		{"no providers", `{}`, "providers: is empty"},
		{"no name", `{"providers":[{"execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p"}}]}`, "providers[0].name: is empty"},
		{"a name twice", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p"}},{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"q"}}]}`,
			"providers[1].name: a is also providers[0]'s"},
		{"no plugin", `{"providers":[{"name":"a"}]}`, "providers[0].execConfig: is missing"},
		{"no command", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1"}}]}`, "providers[0].execConfig.command: is empty"},
		{"no apiVersion", `{"providers":[{"name":"a","execConfig":{"command":"p"}}]}`, "providers[0].execConfig.apiVersion: must be one of"},
		{"an unknown arguments policy", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p"},"profileSourcedCLIArgsPolicy":"append"}]}`,
			"providers[0].profileSourcedCLIArgsPolicy: append is not Append or Ignore"},
		{"an unknown environment policy", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p"},"profileSourcedEnvVarsPolicy":"Merge"}]}`,
			"providers[0].profileSourcedEnvVarsPolicy: Merge is not AppendIfNotExists, Replace or Ignore"},
		{"an unnamed variable", `{"providers":[{"name":"a","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"p","env":[{"name":"","value":"x"}]}}]}`,
			"providers[0].execConfig.env[0].name: is empty"},
		{"not JSON", `providers: []`, "/p.json: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProviders([]byte(tt.data), "/p.json")
			if tt.want == "" {
				if err != nil || p.From != "/p.json" || len(p.Config.Providers) != 1 {
					t.Fatalf("ParseProviders = %+v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "/p.json: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want /p.json: …%s", err, tt.want)
			}
		})
	}
}

// write writes data to dir/name and returns its path.
func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// section is the providers.clusterprofile section of a fleet config, as
// JSON, from YAML.
func section(t *testing.T, y string) json.RawMessage {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// The provider file comes from the flag, else from the fleet config's
// section: a file relative to the config's directory or under ~/, or the
// providers inline. The section is decoded strictly.
func TestProviderFileFromFlagOrFleetConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	config := filepath.Join(dir, "fleet.yaml")
	other := strings.Replace(upstreamExample, `"secretreader"`, `"other"`, 1)
	besideConfig := write(t, dir, "cp/providers.json", upstreamExample)
	inHome := write(t, home, ".kube/cp.json", upstreamExample)
	flagFile := write(t, t.TempDir(), "flag.json", other)
	tests := []struct {
		name    string
		section string // YAML; "" for none
		flag    string
		from    string // the provider file's From; "" for none
		name0   string // its first provider
		want    string // the error
	}{
		{name: "none"},
		{name: "an empty section", section: "{}"},
		{name: "relative to the fleet config", section: "providerFile: cp/providers.json", from: besideConfig, name0: "secretreader"},
		{name: "under the home directory", section: "providerFile: ~/.kube/cp.json", from: inHome, name0: "secretreader"},
		{name: "an absolute path", section: "providerFile: " + besideConfig, from: besideConfig, name0: "secretreader"},
		{name: "inline", section: "providers:\n- name: gke\n  execConfig:\n    apiVersion: client.authentication.k8s.io/v1beta1\n    command: gke-gcloud-auth-plugin\n    provideClusterInfo: true\n",
			from: "providers.clusterprofile of fleet config " + config, name0: "gke"},
		{name: "the flag overrides the section", section: "providerFile: cp/providers.json", flag: flagFile, from: flagFile, name0: "other"},
		{name: "the flag overrides inline providers", section: "providers: [{name: a, execConfig: {apiVersion: client.authentication.k8s.io/v1, command: p}}]", flag: flagFile, from: flagFile, name0: "other"},
		{name: "an unknown key", section: "providerfile: x.json", want: "fleet config " + config + `: providers.clusterprofile: unknown field "providerfile"`},
		{name: "both", section: "providerFile: x.json\nproviders: []", want: "providers.clusterprofile: give providerFile or providers, not both"},
		{name: "inline, not valid", section: "providers: [{name: a, execConfig: {command: p, apiVersion: client.authentication.k8s.io/v1, shell: true}}]",
			want: "fleet config " + config + `: providers.clusterprofile: unknown field "providers[0].execConfig.shell"`},
		{name: "a file that is not there", section: "providerFile: missing.json",
			want: "fleet config " + config + ": providers.clusterprofile.providerFile: failed to read the ClusterProfile provider file"},
		{name: "a flag's file that is not there", flag: filepath.Join(dir, "missing.json"), want: "invalid --clusterprofile-provider-file: failed to read"},
		{name: "a flag's file that is not valid", flag: write(t, dir, "bad.json", `{"providers":[{"name":"a"}]}`),
			want: "invalid --clusterprofile-provider-file: " + filepath.Join(dir, "bad.json") + ": providers[0].execConfig: is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProvider()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			p.AddFlags(fs)
			if tt.flag != "" {
				if err := fs.Parse([]string{"--" + FlagProviderFile, tt.flag}); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if tt.section != "" {
				err = p.Configure(section(t, tt.section), config)
			}
			if err == nil {
				err = p.Validate()
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v; want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := p.Source().(Source).Providers
			switch {
			case tt.from == "" && got != nil:
				t.Errorf("provider file %+v; want none", got)
			case tt.from != "" && (got == nil || got.From != tt.from || got.Config.Providers[0].Name != tt.name0):
				t.Errorf("provider file %+v; want %s from %s", got, tt.name0, tt.from)
			}
		})
	}
}
