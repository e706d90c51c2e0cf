package cmd

import (
	"bytes"
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	tests := []struct {
		answer string
		want   bool
	}{{"y\n", true}, {"YES\n", true}, {"  yes\t\n", true}, {"n\n", false}, {"\n", false}, {"", false}, {"sure\n", false}}
	for _, tt := range tests {
		answer, want := tt.answer, tt.want
		var out bytes.Buffer
		if got := confirm(strings.NewReader(answer), &out, "Continue? [y/N] "); got != want {
			t.Errorf("answer %q: confirm = %v, want %v", answer, got, want)
		}
		if out.String() != "Continue? [y/N] " {
			t.Errorf("asked %q", out.String())
		}
	}
}
