package fleetconfig_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleetconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

const header = "apiVersion: fleet.kubectl-fleet.io/v1alpha1\nkind: FleetConfig\n"

const fullConfig = header + `credentials: user,admin
credentialPlugins:
- command: aws
  servers: ["*.eks.amazonaws.com"]
- command: kubelogin
routes:
- path: aws/**
  proxy: socks5://bastion.example:1080
- path: azure/*
  proxy: http://proxy.example:3128
- path: gcp/team-a
  context: gcp-team-a
`

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestLoad(t *testing.T) {
	emptyHome := t.TempDir()
	home := t.TempDir()
	defaultFile := writeFile(t, filepath.Join(home, ".kube", "fleet.yaml"), fullConfig)
	explicit := writeFile(t, filepath.Join(t.TempDir(), "other.yaml"), header+"credentials: user\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	bad := writeFile(t, filepath.Join(t.TempDir(), "bad.yaml"), header+"credentials: root\n")

	tests := []struct {
		name        string
		file, home  string
		wantErr     string
		wantFile    string
		wantCreds   string
		wantRoutes  int
		wantPlugins int
	}{
		{name: "no file, no home", file: "", home: ""},
		{name: "default missing under home", file: "", home: emptyHome},
		{name: "default present under home", file: "", home: home, wantFile: defaultFile, wantCreds: "user,admin", wantRoutes: 3, wantPlugins: 2},
		{name: "explicit missing", file: missing, home: home, wantErr: "failed to read the fleet config"},
		{name: "explicit present wins over home", file: explicit, home: home, wantFile: explicit, wantCreds: "user"},
		{name: "explicit invalid", file: bad, home: home, wantErr: "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := fleetconfig.Load(tt.file, tt.home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load() error = %v, want one containing %q", err, tt.wantErr)
				}
				if c != nil {
					t.Errorf("Load() config = %+v on error, want nil", c)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if c == nil {
				t.Fatal("Load() config = nil")
			}
			if c.File != tt.wantFile {
				t.Errorf("File = %q, want %q", c.File, tt.wantFile)
			}
			if c.Credentials != tt.wantCreds {
				t.Errorf("Credentials = %q, want %q", c.Credentials, tt.wantCreds)
			}
			if len(c.Routes) != tt.wantRoutes || len(c.CredentialPlugins) != tt.wantPlugins {
				t.Errorf("got %d routes, %d plugins; want %d, %d", len(c.Routes), len(c.CredentialPlugins), tt.wantRoutes, tt.wantPlugins)
			}
			if tt.wantFile == "" && !reflect.DeepEqual(c, &fleetconfig.Config{}) {
				t.Errorf("config = %+v, want empty", c)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	c, err := fleetconfig.Parse("/etc/fleet.yaml", []byte(fullConfig))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	want := &fleetconfig.Config{
		APIVersion:  fleetconfig.APIVersion,
		Kind:        fleetconfig.Kind,
		Credentials: "user,admin",
		CredentialPlugins: []fleetconfig.Plugin{
			{Command: "aws", Servers: []string{"*.eks.amazonaws.com"}},
			{Command: "kubelogin"},
		},
		Routes: []fleetconfig.Route{
			{Path: "aws/**", Proxy: "socks5://bastion.example:1080"},
			{Path: "azure/*", Proxy: "http://proxy.example:3128"},
			{Path: "gcp/team-a", Context: "gcp-team-a"},
		},
		File: "/etc/fleet.yaml",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse() =\n%+v\nwant\n%+v", c, want)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{name: "header only", body: ""},
		{name: "credentials admin", body: "credentials: admin\n"},
		{name: "credentials with space", body: "credentials: user, admin\n"},
		{name: "plugin absolute path", body: "credentialPlugins:\n- command: /usr/local/bin/aws\n"},
		{name: "plugin relative clean path", body: "credentialPlugins:\n- command: bin/aws\n"},
		{name: "socks5h proxy", body: "routes:\n- {path: aws, proxy: \"socks5h://h:1080\"}\n"},
		{name: "https proxy with trailing slash", body: "routes:\n- {path: aws, proxy: \"https://h:443/\"}\n"},
		{name: "proxy and context", body: "routes:\n- {path: aws, proxy: \"http://h:1\", context: c}\n"},
		{name: "namesake pattern", body: "routes:\n- {path: \"aws/tenants:*\", context: c}\n"},
		{name: "character class pattern", body: "routes:\n- {path: \"aws/team-[ab]\", context: c}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fleetconfig.Parse("f.yaml", []byte(header+tt.body)); err != nil {
				t.Errorf("Parse() error = %v", err)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		data string
		// want are all substrings the error must contain.
		want []string
	}{
		{name: "unknown key", data: header + "credentialPluginAllowlist:\n- command: aws\n", want: []string{"credentialPluginAllowlist"}},
		{name: "typo in nested key", data: header + "routes:\n- {path: aws, proxi: \"http://h:1\"}\n", want: []string{"proxi"}},
		{name: "duplicate key", data: header + "credentials: user\ncredentials: admin\n", want: []string{"credentials"}},
		{name: "not yaml", data: header + "routes: [\n", want: []string{"f.yaml"}},
		{name: "empty file", data: "", want: []string{"apiVersion and kind"}},
		{name: "wrong apiVersion", data: "apiVersion: v1\nkind: FleetConfig\n", want: []string{"apiVersion and kind must be " + fleetconfig.APIVersion}},
		{name: "wrong kind", data: "apiVersion: " + fleetconfig.APIVersion + "\nkind: Config\n", want: []string{"apiVersion and kind"}},
		{name: "missing header", data: "credentials: user\n", want: []string{"apiVersion and kind"}},
		{name: "credentials root", data: header + "credentials: root\n", want: []string{"credentials:", `"root"`}},
		{name: "credentials admin,user", data: header + "credentials: admin,user\n", want: []string{"credentials:"}},
		{name: "plugin command empty", data: header + "credentialPlugins:\n- command: \"\"\n", want: []string{"credentialPlugins[0].command"}},
		{name: "plugin command missing", data: header + "credentialPlugins:\n- servers: [x.example]\n", want: []string{"credentialPlugins[0].command"}},
		{name: "plugin command unclean", data: header + "credentialPlugins:\n- command: kubelogin\n- command: ./aws/../aws\n", want: []string{"credentialPlugins[1].command"}},
		{name: "plugin command trailing slash", data: header + "credentialPlugins:\n- command: bin/aws/\n", want: []string{"credentialPlugins[0].command"}},
		{name: "server with scheme", data: header + "credentialPlugins:\n- command: aws\n  servers: [\"https://x.example\"]\n", want: []string{"credentialPlugins[0].servers[0]"}},
		{name: "server empty", data: header + "credentialPlugins:\n- command: aws\n  servers: [ok.example, \"\"]\n", want: []string{"credentialPlugins[0].servers[1]", "empty"}},
		{name: "server with port", data: header + "credentialPlugins:\n- command: aws\n  servers: [\"x.example:443\"]\n", want: []string{"credentialPlugins[0].servers[0]"}},
		{name: "server bad pattern", data: header + "credentialPlugins:\n- command: aws\n  servers: [\"[x\"]\n", want: []string{"credentialPlugins[0].servers[0]", "may have one wildcard only"}},
		{name: "route path empty", data: header + "routes:\n- {path: \"\", context: c}\n", want: []string{"routes[0].path", "empty"}},
		{name: "route path empty segment", data: header + "routes:\n- {path: \"aws//x\", context: c}\n", want: []string{"routes[0].path", "empty segment"}},
		{name: "route path leading slash", data: header + "routes:\n- {path: \"/aws\", context: c}\n", want: []string{"routes[0].path"}},
		{name: "route path bad pattern", data: header + "routes:\n- {path: \"aws/[x\", context: c}\n", want: []string{"routes[0].path", `"[x"`}},
		{name: "route without proxy or context", data: header + "routes:\n- {path: aws, context: c}\n- {path: azure}\n", want: []string{"routes[1]: give a proxy, a context, or both"}},
		{name: "proxy ftp", data: header + "routes:\n- {path: aws, proxy: \"ftp://x:1\"}\n", want: []string{"routes[0].proxy", `"ftp"`}},
		{name: "proxy without host", data: header + "routes:\n- {path: aws, proxy: \"socks5://\"}\n", want: []string{"routes[0].proxy", "not a URL"}},
		{name: "proxy with path", data: header + "routes:\n- {path: aws, proxy: \"http://h:1/path\"}\n", want: []string{"routes[0].proxy", "without a path"}},
		{name: "proxy with query", data: header + "routes:\n- {path: aws, proxy: \"http://h:1?x=y\"}\n", want: []string{"routes[0].proxy", "without a path"}},
		{name: "proxy bare host", data: header + "routes:\n- {path: aws, proxy: \"h:1\"}\n", want: []string{"routes[0].proxy"}},
		{
			name: "several errors all reported",
			data: "apiVersion: v1\nkind: FleetConfig\ncredentials: root\n" +
				"credentialPlugins:\n- command: \"\"\n  servers: [\"https://x.example\"]\n" +
				"routes:\n- {path: \"aws//x\", proxy: \"ftp://x:1\"}\n- {path: azure}\n",
			want: []string{
				"apiVersion and kind",
				"credentials:",
				"credentialPlugins[0].command",
				"credentialPlugins[0].servers[0]",
				"routes[0].path",
				"routes[0].proxy",
				"routes[1]: give a proxy",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := fleetconfig.Parse("f.yaml", []byte(tt.data))
			if err == nil {
				t.Fatalf("Parse() = %+v, want an error", c)
			}
			if c != nil {
				t.Errorf("Parse() config = %+v on error, want nil", c)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "fleet config f.yaml: ") {
				t.Errorf("error %q does not name the file", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestValidProxy(t *testing.T) {
	tests := []struct {
		proxy string
		ok    bool
	}{
		{"socks5://h:1080", true},
		{"socks5h://h:1080", true},
		{"http://h:3128", true},
		{"https://h:443", true},
		{"http://h:1/", true},
		{"http://user:pw@h:1", true},
		{"ftp://x:1", false},
		{"socks5://", false},
		{"http://h:1/path", false},
		{"http://h:1?q=1", false},
		{"", false},
		{"h:1", false},
		{"http://h:port", false},
		{"://h:1", false},
	}
	for _, tt := range tests {
		t.Run(tt.proxy, func(t *testing.T) {
			err := fleetconfig.ValidProxy(tt.proxy)
			if (err == nil) != tt.ok {
				t.Errorf("ValidProxy(%q) = %v, want ok=%v", tt.proxy, err, tt.ok)
			}
		})
	}
}

func TestPlugins(t *testing.T) {
	c, err := fleetconfig.Parse("/home/me/.kube/fleet.yaml", []byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := []kubeconfig.Allowed{
		{Command: "aws", Servers: []string{"*.eks.amazonaws.com"}, From: "/home/me/.kube/fleet.yaml"},
		{Command: "kubelogin", From: "/home/me/.kube/fleet.yaml"},
	}
	if got := c.Plugins(); !reflect.DeepEqual(got, want) {
		t.Errorf("Plugins() = %+v, want %+v", got, want)
	}
	if got := (&fleetconfig.Config{}).Plugins(); len(got) != 0 {
		t.Errorf("empty config Plugins() = %+v, want none", got)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"aws/**", "aws", true},
		{"aws/**", "aws/team-a", true},
		{"aws/**", "aws/team-a/x", true},
		{"aws/**", "azure/team-a", false},
		{"aws/**", "aws2", false},
		{"aws/**", "aws2/team-a", false},
		{"*/team-a", "aws/team-a", true},
		{"*/team-a", "aws/team-b", false},
		{"*/team-a", "team-a", false},
		{"*/team-a", "aws/team-a/x", false},
		{"aws", "aws", true},
		{"aws", "aws/team-a", false},
		{"aws/team-a", "aws/tenants:team-a", true},
		{"aws/tenants:*", "aws/tenants:team-a", true},
		{"aws/tenants:*", "aws/team-a", false},
		{"aws/other:*", "aws/tenants:team-a", false},
		{"aws/tenants:team-a", "aws/other:team-a", false},
		{"aws/team-b", "aws/tenants:team-a", false},
		{"tenants:aws/**", "tenants:aws/x", true},
		{"aws/**", "tenants:aws/x", true},
		{"**", "aws/team-a/x", true},
		{"**/x", "aws/team-a/x", true},
		{"**/x", "x", true},
		{"**/x", "aws/team-a/y", false},
		{"aws/**/x", "aws/x", true},
		{"aws/**/x", "aws/a/b/x", true},
		{"aws/**/x", "aws/a/b/y", false},
		{"aws/team-[ab]", "aws/team-b", true},
		{"aws/team-[ab]", "aws/team-c", false},
		{"aws/team-?", "aws/team-a", true},
		{"aws/[x", "aws/[x", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.path, func(t *testing.T) {
			if got := fleetconfig.Match(tt.pattern, tt.path); got != tt.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
			}
		})
	}
}

func TestRouteFor(t *testing.T) {
	c := &fleetconfig.Config{Routes: []fleetconfig.Route{
		{Path: "aws/team-a", Context: "first"},
		{Path: "aws/**", Proxy: "socks5://h:1"},
		{Path: "*/team-a", Context: "never-first-for-aws"},
		{Path: "**", Context: "catch-all"},
	}}
	tests := []struct {
		path string
		want int // index into c.Routes, -1 for none
	}{
		{"", -1},
		{"aws/team-a", 0},
		{"aws/tenants:team-a", 0},
		{"aws", 1},
		{"aws/team-b", 1},
		{"aws/team-a/x", 1},
		{"azure/team-a", 2},
		{"azure", 3},
		{"gcp/x/y", 3},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := c.RouteFor(tt.path)
			if tt.want < 0 {
				if got != nil {
					t.Errorf("RouteFor(%q) = %+v, want nil", tt.path, got)
				}
				return
			}
			if got != &c.Routes[tt.want] {
				t.Errorf("RouteFor(%q) = %+v, want routes[%d] %+v", tt.path, got, tt.want, c.Routes[tt.want])
			}
		})
	}

	if got := (&fleetconfig.Config{}).RouteFor("aws"); got != nil {
		t.Errorf("no routes: RouteFor() = %+v, want nil", got)
	}
}

func TestParseCredentials(t *testing.T) {
	tests := []struct {
		in      string
		want    kubeconfig.Credentials
		wantErr bool
	}{
		{in: "", want: kubeconfig.Credentials{}},
		{in: "admin", want: kubeconfig.Credentials{}},
		{in: "user", want: kubeconfig.Credentials{User: true}},
		{in: "user,admin", want: kubeconfig.Credentials{User: true, Admin: true}},
		{in: "user, admin", want: kubeconfig.Credentials{User: true, Admin: true}},
		{in: "admin,user", wantErr: true},
		{in: "x", wantErr: true},
		{in: "Admin", wantErr: true},
		{in: "user,", wantErr: true},
		{in: "admin,admin", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := fleetconfig.ParseCredentials(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseCredentials(%q) = %+v, want an error", tt.in, got)
				}
				if !strings.Contains(err.Error(), "admin, user, user,admin") {
					t.Errorf("error %q does not list the choices", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCredentials(%q) error = %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseCredentials(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			// The parsed value prints back as its canonical spelling.
			if s := got.String(); (tt.in == "" && s != "admin") || (tt.in != "" && s != strings.ReplaceAll(tt.in, " ", "")) {
				t.Errorf("ParseCredentials(%q).String() = %q", tt.in, s)
			}
		})
	}
}

// An integration's settings are kept as they are written, under its name,
// for the integration to decode (provider.Set.Configure).
func TestProvidersSections(t *testing.T) {
	c, err := fleetconfig.Parse("fleet.yaml", []byte(header+"providers:\n  clusterprofile:\n    providerFile: providers.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Providers["clusterprofile"]); got != `{"providerFile":"providers.json"}` {
		t.Errorf("providers.clusterprofile = %s", got)
	}
}
