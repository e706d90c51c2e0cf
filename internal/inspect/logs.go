package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// LogQuery asks for the tail of a log: of a controller of the providers
// (Controller), or of a pod (Namespace, Pod).
type LogQuery struct {
	// Controller is the name of one of the providers' controllers:
	// "kustomize-controller", "argocd-application-controller",
	// "capi-controller-manager", ….
	Controller string
	// Namespace and Pod name a pod instead ("default" when Namespace is
	// empty); Container one of its containers (the pod's default one,
	// as kubectl logs picks it, when empty).
	Namespace, Pod, Container string
	// TailLines is the most lines: DefaultTailLines when 0, at most
	// MaxTailLines.
	TailLines int64
	// LimitBytes is the most bytes: DefaultLimitBytes when 0, at most
	// MaxLimitBytes.
	LimitBytes int64
	// Previous asks for the log of the container's previous run.
	Previous bool
}

// LogsResult is the tail of a container's log.
type LogsResult struct {
	Pod       string   `json:"pod"`
	Namespace string   `json:"namespace"`
	Container string   `json:"container,omitempty"`
	Lines     []string `json:"lines"`
	// Truncated says the byte bound cut the tail: its first lines are
	// missing, or its last is cut short.
	Truncated bool `json:"truncated,omitempty"`
}

// defaultContainer is the annotation by which a pod names the container
// kubectl logs reads when given none.
const defaultContainer = "kubectl.kubernetes.io/default-container"

// Logs reads the tail of the log q asks for from the cluster of conn. A
// controller is found among controllers by name, and its pod by the
// controller's namespace and label selector: the first by name that is
// Running, else the first. Each request, the log's stream included, is
// bounded by timeout.
func Logs(ctx context.Context, conn *kube.Conn, q LogQuery, controllers []provider.Controller, timeout time.Duration) (*LogsResult, error) {
	ctx, cancel, timeout := bounded(ctx, timeout)
	defer cancel()
	tail, err := bound(q.TailLines, DefaultTailLines, MaxTailLines, "tailLines")
	if err != nil {
		return nil, err
	}
	limitBytes, err := bound(q.LimitBytes, DefaultLimitBytes, MaxLimitBytes, "limitBytes")
	if err != nil {
		return nil, err
	}
	var ctl *provider.Controller
	switch {
	case q.Controller != "" && q.Pod != "":
		return nil, errors.New("give a controller or a pod, not both")
	case q.Controller == "" && q.Pod == "":
		return nil, fmt.Errorf("give a controller (%s) or a pod", names(controllers))
	case q.Controller != "":
		i := slices.IndexFunc(controllers, func(c provider.Controller) bool { return c.Name == q.Controller })
		if i < 0 {
			return nil, fmt.Errorf("unknown controller %q: the known ones are %s; or give a pod", q.Controller, names(controllers))
		}
		ctl = &controllers[i]
	}
	cs, err := conn.Clientset(timeout)
	if err != nil {
		return nil, err
	}
	var pod *corev1.Pod
	if ctl != nil {
		pod, err = controllerPod(ctx, cs, ctl)
	} else {
		pod, err = namedPod(ctx, cs, q.Namespace, q.Pod)
	}
	if err != nil {
		return nil, reachError(ctx, conn, err)
	}
	container, err := containerOf(pod, q.Container)
	if err != nil {
		return nil, err
	}
	opts := &corev1.PodLogOptions{Container: container, TailLines: &tail, LimitBytes: &limitBytes, Previous: q.Previous}
	stream, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return nil, reachError(ctx, conn, fmt.Errorf("failed to read the log of container %s of pod %s/%s: %w", container, pod.Namespace, pod.Name, err))
	}
	defer func() { _ = stream.Close() }()
	// The apiserver stops at limitBytes; reading one more byte tells a
	// server that does not from one whose log fits.
	body, err := io.ReadAll(io.LimitReader(stream, limitBytes+1))
	if err != nil {
		return nil, reachError(ctx, conn, fmt.Errorf("failed to read the log of container %s of pod %s/%s: %w", container, pod.Namespace, pod.Name, err))
	}
	out := &LogsResult{Pod: pod.Name, Namespace: pod.Namespace, Container: container, Lines: []string{}}
	if int64(len(body)) >= limitBytes {
		body = body[:limitBytes]
		out.Truncated = true
	}
	if len(body) > 0 {
		out.Lines = strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	}
	if int64(len(out.Lines)) > tail {
		out.Lines = out.Lines[int64(len(out.Lines))-tail:]
		out.Truncated = true
	}
	return out, nil
}

// controllerPod is the pod of ctl whose log is read: the first by name
// that is Running, else the first.
func controllerPod(ctx context.Context, cs kubernetes.Interface, ctl *provider.Controller) (*corev1.Pod, error) {
	list, err := cs.CoreV1().Pods(ctl.Namespace).List(ctx, metav1.ListOptions{LabelSelector: ctl.Selector, Limit: MaxLimit})
	if err != nil {
		return nil, fmt.Errorf("failed to list the pods of %s (namespace %s, labels %s): %w", ctl.Name, ctl.Namespace, ctl.Selector, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no pod of %s on this cluster (none in namespace %s has labels %s): is it installed here? A pod of another name or namespace may be given as a pod", ctl.Name, ctl.Namespace, ctl.Selector)
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if i < 0 {
		i = 0
	}
	return &pods[i], nil
}

// namedPod is the pod namespace/name ("default" when namespace is empty).
func namedPod(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*corev1.Pod, error) {
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	pod, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no pod %s in namespace %s on this cluster", name, namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// containerOf is the container of pod whose log is read: want, which the
// pod must have, or, when empty, the one its default-container annotation
// names, else its first, as kubectl logs picks it.
func containerOf(pod *corev1.Pod, want string) (string, error) {
	var all []string
	for _, c := range pod.Spec.InitContainers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		all = append(all, c.Name)
	}
	switch {
	case want != "" && slices.Contains(all, want):
		return want, nil
	case want != "":
		return "", fmt.Errorf("pod %s/%s has no container %q: its containers are %s", pod.Namespace, pod.Name, want, strings.Join(all, ", "))
	case len(pod.Spec.Containers) == 0:
		return "", fmt.Errorf("pod %s/%s has no container", pod.Namespace, pod.Name)
	}
	if name := pod.Annotations[defaultContainer]; name != "" && slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name }) {
		return name, nil
	}
	return pod.Spec.Containers[0].Name, nil
}

// names lists the controllers' names.
func names(controllers []provider.Controller) string {
	var out []string
	for _, c := range controllers {
		out = append(out, c.Name)
	}
	if len(out) == 0 {
		return "no controller is known"
	}
	return strings.Join(out, ", ")
}
