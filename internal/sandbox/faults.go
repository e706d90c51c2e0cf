package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func (f *Fleet) writeFaultFiles() error {
	script, err := f.execPlugin()
	if err != nil {
		return err
	}
	return errors.Join(
		f.writeFile(ExecPluginFile, script, 0o755),
		f.writeFile(TokenFile, []byte("sandbox-token-that-must-never-be-read\n"), 0o600),
	)
}

// execPlugin is the exec credential plugin of "exec" faults and of user
// kubeconfigs. It leaves a marker when it runs, so tests can prove it never
// did; and it answers with a real credential (an admin of the root cluster,
// which "exec" faults point at), so that --allow-exec can be shown to work.
func (f *Fleet) execPlugin() ([]byte, error) {
	user, err := f.Members[""].server.addUser(envtest.User{Name: ExecUser, Groups: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": execStatus(user),
	})
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "#!/bin/sh\n# An exec credential plugin named by a kubeconfig in a Secret: kubectl fleet\n# must never run it unless --allow-exec lists it.\ntouch %q\ncat <<'JSON'\n%s\nJSON\n",
		filepath.Join(f.Dir, ExecMarkerFile), cred), nil
}

// execStatus is the ExecCredential status that authenticates as cfg's
// user: its client certificate, or the token of an in-memory cluster's.
func execStatus(cfg *rest.Config) map[string]string {
	if cfg.BearerToken != "" {
		return map[string]string{"token": cfg.BearerToken}
	}
	return map[string]string{"clientCertificateData": string(cfg.CertData), "clientKeyData": string(cfg.KeyData)}
}

// ExecPluginPath is the exec credential plugin of "exec" faults and user kubeconfigs.
func (f *Fleet) ExecPluginPath() string { return filepath.Join(f.Dir, ExecPluginFile) }

// ExecMarker is the file an exec plugin of an "exec" fault creates if it runs.
func (f *Fleet) ExecMarker() string { return filepath.Join(f.Dir, ExecMarkerFile) }

// TokenFilePath is the file "tokenfile" faults name.
func (f *Fleet) TokenFilePath() string { return filepath.Join(f.Dir, TokenFile) }

// faultKubeconfig returns the Secret value for a child with a fault, or nil
// when the fault is to have no Secret at all.
func (f *Fleet) faultKubeconfig(parent *server, child *ClusterSpec) ([]byte, error) {
	root := f.Members[""]
	switch child.Kubeconfig {
	case KubeconfigMissing:
		return nil, nil
	case KubeconfigGarbage:
		return []byte("this: is [not a kubeconfig\n\x00\x01"), nil
	case KubeconfigExec:
		return kubeconfigFor(child.Name, root.Config, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: f.ExecPluginPath(), InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}})
	case KubeconfigTokenFile:
		return kubeconfigFor(child.Name, parent.config, &clientcmdapi.AuthInfo{TokenFile: f.TokenFilePath()})
	case KubeconfigUnreachable:
		port, err := f.closedPort()
		if err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(parent.config)
		cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigForbidden:
		cfg, err := parent.addUser(envtest.User{Name: ForbiddenUser})
		if err != nil {
			return nil, err
		}
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigCycle:
		return kubeconfigFor(child.Name, root.Config, nil)
	case KubeconfigInCluster:
		cfg := rest.CopyConfig(root.Config)
		cfg.Host = InClusterServer
		return kubeconfigFor(child.Name, cfg, nil)
	}
	return nil, fmt.Errorf("unknown kubeconfig fault %q", child.Kubeconfig)
}

// closedPort returns a loopback port nothing listens on, and nothing will
// while the fleet runs: a socket bound to it and not listening holds it
// (a port merely bound and released was seen taken by another process of
// a busy fleet later, a TLS answer where a refusal was expected), so a
// connection to it is refused at once.
func (f *Fleet) closedPort() (int, error) {
	if f.mem != nil { // a port no in-memory cluster has is closed
		return f.mem.port(), nil
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	sa := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	bound, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	f.reservedMu.Lock()
	f.reserved = append(f.reserved, fd)
	f.reservedMu.Unlock()
	return bound.(*syscall.SockaddrInet4).Port, nil
}
