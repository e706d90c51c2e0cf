// Package appspec is what kubectl fleet reads of an Argo CD Application
// and of its hub's settings to diff it with a checkout: the fields of
// Argo CD's v1alpha1 types (github.com/argoproj/argo-cd/v3/pkg/apis/
// application/v1alpha1, whose module brings k8s.io/kubernetes along) and
// of the argocd-cm and argocd-cmd-params-cm ConfigMaps that the render and
// the comparison honour, by their JSON names.
package appspec

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Application is an Argo CD Application, as the diff reads it.
type Application struct {
	Namespace   string            `json:"-"`
	Name        string            `json:"-"`
	Annotations map[string]string `json:"-"`
	Spec        Spec              `json:"spec"`
	Status      Status            `json:"status"`
}

// Spec is an Application's spec.
type Spec struct {
	Project           string                      `json:"project,omitempty"`
	Source            *Source                     `json:"source,omitempty"`
	Sources           []Source                    `json:"sources,omitempty"`
	Destination       Destination                 `json:"destination"`
	SyncPolicy        *SyncPolicy                 `json:"syncPolicy,omitempty"`
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// AllSources are the Application's sources: spec.sources, else
// spec.source (Argo CD's Spec.GetSources).
func (s *Spec) AllSources() []Source {
	if len(s.Sources) > 0 {
		return s.Sources
	}
	if s.Source != nil {
		return []Source{*s.Source}
	}
	return nil
}

// Source is one source of an Application (ApplicationSource).
type Source struct {
	RepoURL        string     `json:"repoURL"`
	Path           string     `json:"path,omitempty"`
	TargetRevision string     `json:"targetRevision,omitempty"`
	Helm           *Helm      `json:"helm,omitempty"`
	Kustomize      *Kustomize `json:"kustomize,omitempty"`
	Directory      *Directory `json:"directory,omitempty"`
	Plugin         *Plugin    `json:"plugin,omitempty"`
	Chart          string     `json:"chart,omitempty"`
	Ref            string     `json:"ref,omitempty"`
	Name           string     `json:"name,omitempty"`
}

// Helm is a source's helm (ApplicationSourceHelm).
type Helm struct {
	ValueFiles              []string            `json:"valueFiles,omitempty"`
	Parameters              []HelmParameter     `json:"parameters,omitempty"`
	ReleaseName             string              `json:"releaseName,omitempty"`
	Values                  string              `json:"values,omitempty"`
	FileParameters          []HelmFileParameter `json:"fileParameters,omitempty"`
	Version                 string              `json:"version,omitempty"`
	PassCredentials         bool                `json:"passCredentials,omitempty"`
	IgnoreMissingValueFiles bool                `json:"ignoreMissingValueFiles,omitempty"`
	SkipCrds                bool                `json:"skipCrds,omitempty"`
	ValuesObject            json.RawMessage     `json:"valuesObject,omitempty"`
	Namespace               string              `json:"namespace,omitempty"`
	KubeVersion             string              `json:"kubeVersion,omitempty"`
	APIVersions             []string            `json:"apiVersions,omitempty"`
	SkipTests               bool                `json:"skipTests,omitempty"`
	SkipSchemaValidation    bool                `json:"skipSchemaValidation,omitempty"`
}

// HelmParameter is a --set (or --set-string, ForceString) of a Helm source.
type HelmParameter struct {
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	ForceString bool   `json:"forceString,omitempty"`
}

// HelmFileParameter is a --set-file of a Helm source: Path in the checkout.
type HelmFileParameter struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// Kustomize is a source's kustomize (ApplicationSourceKustomize).
type Kustomize struct {
	NamePrefix                string             `json:"namePrefix,omitempty"`
	NameSuffix                string             `json:"nameSuffix,omitempty"`
	Images                    []string           `json:"images,omitempty"`
	CommonLabels              map[string]string  `json:"commonLabels,omitempty"`
	Version                   string             `json:"version,omitempty"`
	CommonAnnotations         map[string]string  `json:"commonAnnotations,omitempty"`
	ForceCommonLabels         bool               `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations    bool               `json:"forceCommonAnnotations,omitempty"`
	Namespace                 string             `json:"namespace,omitempty"`
	CommonAnnotationsEnvsubst bool               `json:"commonAnnotationsEnvsubst,omitempty"`
	Replicas                  []KustomizeReplica `json:"replicas,omitempty"`
	Patches                   []KustomizePatch   `json:"patches,omitempty"`
	Components                []string           `json:"components,omitempty"`
	IgnoreMissingComponents   bool               `json:"ignoreMissingComponents,omitempty"`
	LabelWithoutSelector      bool               `json:"labelWithoutSelector,omitempty"`
	KubeVersion               string             `json:"kubeVersion,omitempty"`
	APIVersions               []string           `json:"apiVersions,omitempty"`
	LabelIncludeTemplates     bool               `json:"labelIncludeTemplates,omitempty"`
}

// KustomizeReplica sets the replicas of the workload Name.
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a patch of a Kustomize source: a file of the
// checkout (Path) or inline (Patch).
type KustomizePatch struct {
	Path    string             `json:"path,omitempty"`
	Patch   string             `json:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty"`
}

// KustomizeSelector is a patch's target.
type KustomizeSelector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// Directory is a source's directory (ApplicationSourceDirectory); Jsonnet
// is kept raw: only whether it is set matters (it is not rendered).
type Directory struct {
	Recurse bool            `json:"recurse,omitempty"`
	Jsonnet json.RawMessage `json:"jsonnet,omitempty"`
	Exclude string          `json:"exclude,omitempty"`
	Include string          `json:"include,omitempty"`
}

// Plugin is a source's config management plugin: never rendered here.
type Plugin struct {
	Name string `json:"name,omitempty"`
}

// Destination is where an Application deploys: a cluster by its server
// URL or its name in the hub's cluster Secrets, and a namespace.
type Destination struct {
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// SyncPolicy is an Application's spec.syncPolicy.
type SyncPolicy struct {
	Automated   *Automated `json:"automated,omitempty"`
	SyncOptions []string   `json:"syncOptions,omitempty"`
}

// Automated is a sync policy's automated; Enabled nil is enabled.
type Automated struct {
	Prune    *bool `json:"prune,omitempty"`
	SelfHeal *bool `json:"selfHeal,omitempty"`
	Enabled  *bool `json:"enabled,omitempty"`
}

// AutoPrune says an automated sync of the Application prunes.
func (s *Spec) AutoPrune() bool {
	p := s.SyncPolicy
	if p == nil || p.Automated == nil || (p.Automated.Enabled != nil && !*p.Automated.Enabled) {
		return false
	}
	return p.Automated.Prune != nil && *p.Automated.Prune
}

// ResourceIgnoreDifferences is a rule of spec.ignoreDifferences (or of the
// hub's resource.customizations.ignoreDifferences, whose Group and Kind
// the key names).
type ResourceIgnoreDifferences struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// Status is what the diff reads of an Application's status.
type Status struct {
	Resources []ResourceStatus `json:"resources,omitempty"`
	Sync      struct {
		Status    string   `json:"status,omitempty"`
		Revision  string   `json:"revision,omitempty"`
		Revisions []string `json:"revisions,omitempty"`
	} `json:"sync"`
}

// ResourceStatus is an object the controller manages for the
// Application, as status.resources lists it.
type ResourceStatus struct {
	Group           string `json:"group,omitempty"`
	Version         string `json:"version,omitempty"`
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	Status          string `json:"status,omitempty"`
	Hook            bool   `json:"hook,omitempty"`
	RequiresPruning bool   `json:"requiresPruning,omitempty"`
}

// FromUnstructured reads an Application; an error names the field that
// is not of the type Argo CD writes.
func FromUnstructured(u *unstructured.Unstructured) (*Application, error) {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	return Decode(raw)
}

// Decode reads an Application from its JSON.
func Decode(raw []byte) (*Application, error) {
	var a struct {
		Metadata struct {
			Namespace   string            `json:"namespace"`
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec   Spec   `json:"spec"`
		Status Status `json:"status"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("Application %s/%s: field %s is not a %s", a.Metadata.Namespace, a.Metadata.Name, te.Field, te.Type)
		}
		return nil, fmt.Errorf("Application %s/%s: %w", a.Metadata.Namespace, a.Metadata.Name, err)
	}
	return &Application{Namespace: a.Metadata.Namespace, Name: a.Metadata.Name, Annotations: a.Metadata.Annotations, Spec: a.Spec, Status: a.Status}, nil
}

// Tracking methods of a hub (argocd-cm application.resourceTrackingMethod).
const (
	TrackingAnnotation         = "annotation"
	TrackingLabel              = "label"
	TrackingAnnotationAndLabel = "annotation+label"
)

// Settings are a hub's Argo CD settings that the render and the comparison
// honour, from its argocd-cm and argocd-cmd-params-cm ConfigMaps
// (ParseSettings, settings.go).
type Settings struct {
	// Namespace is the hub's Argo CD namespace (the control plane's): an
	// Application elsewhere is named namespace_name in its tracking.
	Namespace string
	// TrackingMethod is one of the Tracking constants (default annotation).
	TrackingMethod string
	// InstanceLabelKey is application.instanceLabelKey (default
	// app.kubernetes.io/instance), the label of label tracking.
	InstanceLabelKey string
	// InstallationID is installationID, written beside the tracking id.
	InstallationID string
	// KustomizeBuildOptions are kustomize.buildOptions, as its flags.
	KustomizeBuildOptions string
	// IgnoreDifferences are resource.customizations.ignoreDifferences.*
	// (Group and Kind from the key; "all": every kind, Kind "*").
	IgnoreDifferences []ResourceIgnoreDifferences
	// IgnoreAggregatedRoles and IgnoreResourceStatusField are
	// resource.compareoptions'.
	IgnoreAggregatedRoles     bool
	IgnoreResourceStatusField string
	// ServerSideDiff is controller.diff.server.side of
	// argocd-cmd-params-cm: every Application diffs on the server.
	ServerSideDiff bool
}
