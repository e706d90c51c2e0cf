package httpserve

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server other hosts reach is HTTPS with a token, or is not served;
// loopback needs neither.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		e    Endpoint
		want []string
	}{
		{Endpoint{Listen: "127.0.0.1:0"}, nil},
		{Endpoint{Listen: "localhost:8080"}, nil},
		{Endpoint{Listen: "[::1]:8080"}, nil},
		{Endpoint{Listen: "8080"}, []string{`invalid --listen "8080"`}},
		{Endpoint{Listen: ":8080"}, []string{"refusing to serve the fleet on :8080"}},
		{Endpoint{Listen: "0.0.0.0:8443", TLSCertFile: "c"}, []string{"go together", "refusing"}},
		{Endpoint{Listen: "0.0.0.0:8443", TLSCertFile: "c", TLSKeyFile: "k"}, []string{"without TLS and a token"}},
		{Endpoint{Listen: "0.0.0.0:8443", TLSCertFile: "c", TLSKeyFile: "k", TokenFile: "t"}, nil},
	} {
		errs := tc.e.Validate()
		if len(errs) != len(tc.want) {
			t.Errorf("%+v: %v, want %d errors", tc.e, errs, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%+v: %v, want %q", tc.e, errs[i], w)
			}
		}
	}
}

// The token is the file's first line; an empty file is an error that
// says what to write.
func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := ReadToken(write("t", " s3cret \nsecond line\n")); err != nil || tok != "s3cret" {
		t.Errorf("ReadToken = %q, %v", tok, err)
	}
	if _, err := ReadToken(write("empty", "\n")); err == nil || !strings.Contains(err.Error(), "Authorization: Bearer TOKEN") {
		t.Errorf("an empty file: %v", err)
	}
	if tok, err := ReadToken(""); err != nil || tok != "" {
		t.Errorf("no file: %q, %v", tok, err)
	}
}

func TestSecretAndBearer(t *testing.T) {
	s := NewSecret("abc")
	if !s.Matches("abc") || s.Matches("abd") || s.Matches("") {
		t.Error("Secret.Matches")
	}
	r, _ := http.NewRequest(http.MethodGet, "/", http.NoBody)
	if _, ok := Bearer(r); ok {
		t.Error("a request without Authorization has a bearer token")
	}
	r.Header.Set("Authorization", "Bearer abc")
	if tok, ok := Bearer(r); !ok || tok != "abc" {
		t.Errorf("Bearer = %q, %v", tok, ok)
	}
}
