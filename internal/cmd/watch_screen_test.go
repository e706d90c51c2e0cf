package cmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxPane is a terminal the test types into and reads, as a person would
// use it: a tmux session on a socket of its own.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// keys types keys, tmux's names (Down, Enter, Escape) or text.
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.run(append([]string{"send-keys", "-t", "fleet"}, keys...)...)
}

// screen is what the pane shows now.
func (p *tmuxPane) screen() string {
	p.t.Helper()
	return p.run("capture-pane", "-p", "-t", "fleet")
}

// until waits for the screen to show what cond looks for.
func (p *tmuxPane) until(what string, cond func(screen string) bool) string {
	p.t.Helper()
	var last string
	end := time.Now().Add(time.Minute)
	for time.Now().Before(end) {
		if last = p.screen(); cond(last) {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("the screen never showed %s; it shows:\n%s", what, last)
	return ""
}

// selected is the line of the screen the selection marker is on.
func selected(screen string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.HasPrefix(line, ">") {
			return line
		}
	}
	return ""
}

// `kubectl fleet tree --watch` on a terminal, used as a person uses it,
// under tmux: the tree drawn with the status line; ↓ moves the selection;
// / filters by path; enter opens describe of the selected cluster and esc
// goes back; a Flux object changed on the root shows on its row, marked;
// q quits and the terminal is given back.
func TestWatchScreenUnderTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (make test installs it): %v", err)
	}
	f := watchFleet.get(t)
	p := &tmuxPane{t: t, sock: t.TempDir() + "/tmux.sock"}
	p.run("-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "30", "-s", "fleet",
		"env NO_COLOR=1 "+plugin(t)+" --kubeconfig "+f.Kubeconfig+" tree --watch; echo exited $?; sleep 600")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	p.run("set-option", "-s", "escape-time", "0")

	p.until("the tree and the status line", func(s string) bool {
		return strings.Contains(s, "4 clusters · 4 watched · 0 disconnected") && strings.Contains(s, "team-b") && strings.Contains(selected(s), " mom ")
	})
	p.keys("Down", "Down")
	p.until("the selection on team-a", func(s string) bool { return strings.Contains(selected(s), "team-a") })

	p.keys("/", "team-b", "Enter")
	s := p.until("the filter keeping team-b alone", func(s string) bool {
		return strings.Contains(s, `filter "team-b"`) && strings.Contains(selected(s), "team-b")
	})
	if strings.Contains(s, "team-a") {
		t.Errorf("the filter left team-a:\n%s", s)
	}

	p.keys("Enter")
	p.until("describe of aws/team-b", func(s string) bool {
		return strings.Contains(s, "Cluster:   aws/team-b (tenants/team-b)") && strings.Contains(s, "Kustomization flux-system/billing")
	})
	p.keys("Escape")
	p.until("the tree again", func(s string) bool {
		return strings.Contains(s, `filter "team-b"`) && !strings.Contains(s, "Cluster:   aws/team-b")
	})
	p.keys("Escape") // the filter cleared
	p.until("every cluster again", func(s string) bool { return strings.Contains(s, "team-a") })

	root := f.Members[""].Client
	patchKustomization(t, root, "flux-system", `{"spec":{"suspend":true}}`)
	t.Cleanup(func() { patchKustomization(t, root, "flux-system", `{"spec":{"suspend":false}}`) })
	p.until("the root's row with its suspended Kustomization, marked", func(s string) bool {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, " mom ") && strings.Contains(line, "1 suspended") && strings.Contains(line, "•") {
				return true
			}
		}
		return false
	})

	p.keys("q")
	p.until("the command to exit 0 and give the terminal back", func(s string) bool {
		return strings.Contains(s, "exited 0") && !strings.Contains(s, "CLUSTER")
	})
}

// Linking the live screen does not make every command ask the terminal
// something before it starts (bubbletea v1's init asks for the background
// colour and waits 5 s for an answer): `version` on a terminal that never
// answers prints its version, and nothing else.
func TestNoTerminalQueryAtStart(t *testing.T) {
	pty, tty := openPTY(t)
	cmd := exec.Command(plugin(t), "version")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close() // the command's end only: its exit ends what the test reads
	var out bytes.Buffer
	buf := make([]byte, 4096)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := pty.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		n, err := pty.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break // EIO once the command is gone, or the deadline
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("version: %v: %q", err, out.String())
	}
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), "kubectl-fleet") {
		t.Errorf("version on a terminal wrote %q; want its version and no escape sequence (no query)", out.String())
	}
}
