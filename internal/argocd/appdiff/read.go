package appdiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Argo CD's ConfigMaps of settings, in its control plane's namespace.
const (
	settingsConfigMap = "argocd-cm"
	paramsConfigMap   = "argocd-cmd-params-cm"
	// defaultNamespace is where Argo CD is usually installed.
	defaultNamespace = "argocd"
)

// applications is the diff's list of Applications: their spec and the
// resources they manage. One that cannot be read is kept with why.
var applications = kube.Lister[*appspec.Application]{
	Name: "argocd applications (diff)", GVK: argocd.ApplicationGVK(),
	Keep: func(raw []byte) (client.ObjectKey, *appspec.Application, bool, error) {
		a, err := appspec.Decode(raw)
		if err != nil {
			var meta struct {
				Metadata struct{ Namespace, Name string } `json:"metadata"`
			}
			_ = json.Unmarshal(raw, &meta)
			a = &appspec.Application{Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name}
			a.Annotations = map[string]string{decodeErrorKey: err.Error()}
		}
		return client.ObjectKey{Namespace: a.Namespace, Name: a.Name}, a, true, nil
	},
}

// decodeErrorKey holds, in what is kept of an Application that could not
// be read, why: no annotation has a key with spaces.
const decodeErrorKey = "kubectl fleet: cannot read"

// list lists the Applications of a hub in full, in pages.
func list(ctx context.Context, c *kube.Conn, timeout time.Duration) ([]*appspec.Application, error) {
	ctx, cancel := context.WithTimeout(ctx, max(timeout, time.Second)*4)
	defer cancel()
	apps, err := applications.List(ctx, c)
	switch {
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("forbidden: cannot list Argo CD Applications: the user needs the RBAC rule {apiGroups: [\"argoproj.io\"], resources: [\"applications\"], verbs: [\"list\"]} (%w)", err)
	case err != nil:
		return nil, fmt.Errorf("failed to list Argo CD Applications: %w", err)
	}
	return apps, nil
}

// settings reads the hub's Argo CD settings from its argocd-cm and
// argocd-cmd-params-cm, in the namespace of Argo CD's control plane: the
// first of argocd and the Applications' namespaces that holds argocd-cm.
// Without one, Argo CD's defaults, in the namespace of the first
// Application. An error says what could not be read; the defaults stand
// in for it.
func (d *differ) settings(ctx context.Context, h hub, apps []*appspec.Application) (appspec.Settings, error) {
	namespaces := []string{defaultNamespace}
	for _, a := range apps {
		if !slices.Contains(namespaces, a.Namespace) {
			namespaces = append(namespaces, a.Namespace)
		}
	}
	cs, err := h.conn.Kube().Clientset(max(d.req.Timeout, time.Second))
	if err != nil {
		return defaults(defaultNamespace), fmt.Errorf("cannot read the hub's Argo CD settings: %w", err)
	}
	get := func(ns, name string) (*corev1.ConfigMap, error) {
		ctx, cancel := context.WithTimeout(ctx, max(d.req.Timeout, time.Second))
		defer cancel()
		return cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	}
	for _, ns := range namespaces {
		cm, err := get(ns, settingsConfigMap)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return defaults(ns), fmt.Errorf("cannot read the hub's Argo CD settings (ConfigMap %s/%s): %w", ns, settingsConfigMap, err)
		}
		params, err := get(ns, paramsConfigMap)
		if err != nil && !apierrors.IsNotFound(err) {
			return defaults(ns), fmt.Errorf("cannot read the hub's Argo CD settings (ConfigMap %s/%s): %w", ns, paramsConfigMap, err)
		}
		var pd map[string]string
		if err == nil {
			pd = params.Data
		}
		return appspec.ParseSettings(ns, cm.Data, pd)
	}
	ns := defaultNamespace
	if len(apps) > 0 && !slices.Contains(namespaces[:1], apps[0].Namespace) {
		ns = apps[0].Namespace
	}
	return defaults(ns), nil
}

// destinationOf names a destination as Argo CD's UI does: its server, or
// "name NAME", and its namespace.
func destinationOf(d appspec.Destination) string {
	var parts []string
	switch {
	case d.Server != "":
		parts = append(parts, d.Server)
	case d.Name != "":
		parts = append(parts, "name "+d.Name)
	}
	if d.Namespace != "" {
		parts = append(parts, "namespace "+d.Namespace)
	}
	return strings.Join(parts, ", ")
}

// automated says an automated sync is on.
func automated(p *appspec.SyncPolicy) bool {
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// decodeError is why an Application could not be read, if it could not.
func decodeError(a *appspec.Application) error {
	if msg, ok := a.Annotations[decodeErrorKey]; ok {
		return errors.New(msg)
	}
	return nil
}

// defaults are Argo CD's settings of a hub without argocd-cm.
func defaults(ns string) appspec.Settings {
	s, _ := appspec.ParseSettings(ns, nil, nil)
	return s
}
