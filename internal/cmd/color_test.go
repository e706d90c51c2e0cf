package cmd

import (
	"bytes"
	"io"
	"os"
	"testing"
)

func TestUseColor(t *testing.T) {
	tty, err := os.Open("/dev/ptmx") // a terminal device, as a stand-in for a TTY stdout
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	tests := []struct {
		name    string
		flag    string
		noColor string
		out     io.Writer
		want    bool
	}{
		{"auto on a pipe", colorAuto, "", &bytes.Buffer{}, false},
		{"always on a pipe", colorAlways, "", &bytes.Buffer{}, true},
		{"never", colorNever, "", &bytes.Buffer{}, false},
		{"always beats NO_COLOR", colorAlways, "1", &bytes.Buffer{}, true},
		{"auto on a terminal", colorAuto, "", tty, true},
		{"NO_COLOR on a terminal", colorAuto, "1", tty, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &RootOptions{Color: tt.flag, Getenv: func(k string) string {
				if k == "NO_COLOR" {
					return tt.noColor
				}
				return ""
			}}
			if got := o.useColor(tt.out); got != tt.want {
				t.Errorf("useColor = %v, want %v", got, tt.want)
			}
		})
	}
}
