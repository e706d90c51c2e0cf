package appspec

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// The ConfigMaps ParseSettings reads, and the keys of theirs it honours
// (Argo CD's util/settings).
const (
	ArgoCDConfigMap          = "argocd-cm"
	ArgoCDCmdParamsConfigMap = "argocd-cmd-params-cm"

	keyTrackingMethod        = "application.resourceTrackingMethod"
	keyInstanceLabelKey      = "application.instanceLabelKey"
	keyInstallationID        = "installationID"
	keyKustomizeBuildOptions = "kustomize.buildOptions"
	keyCustomizations        = "resource.customizations"
	keyCompareOptions        = "resource.compareoptions"
	keyServerSideDiff        = "controller.diff.server.side"

	// DefaultInstanceLabelKey is the label of label tracking when
	// application.instanceLabelKey is unset.
	DefaultInstanceLabelKey = "app.kubernetes.io/instance"
)

// The values of resource.compareoptions' ignoreResourceStatusField.
const (
	IgnoreStatusAll  = "all"
	IgnoreStatusCRD  = "crd"
	IgnoreStatusNone = "none"
)

// The customization types a split resource.customizations.<type>.<group_kind>
// key may name: Argo CD refuses every other.
var customizationTypes = map[string]bool{
	"health": true, "useOpenLibs": true, "actions": true, "ignoreDifferences": true,
	"ignoreResourceUpdates": true, "knownTypeFields": true,
}

// overrideIgnoreDiff is the YAML of a resource.customizations.ignoreDifferences.*
// value (Argo CD's OverrideIgnoreDiff).
type overrideIgnoreDiff struct {
	JSONPointers          []string `json:"jsonPointers"`
	JQPathExpressions     []string `json:"jqPathExpressions"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers"`
}

// ParseSettings reads a hub's Argo CD settings from the data of its
// argocd-cm and argocd-cmd-params-cm ConfigMaps (nil: absent), with Argo
// CD 3.x's defaults for what is unset: annotation tracking (the default
// since 3.0), the instance label app.kubernetes.io/instance, status ignored
// on every kind, client-side diff. namespace is the namespace of Argo CD's
// control plane. A value Argo CD would refuse is an error naming the
// ConfigMap and the key; the other keys are still read, and the error
// returned beside the settings joins one error per bad key.
//
// The hub's ignoreDifferences are read from the split keys
// resource.customizations.ignoreDifferences.<group>_<kind> (a key without
// "_" names a kind of the core group; .all every kind: Group and Kind "*")
// and from the older resource.customizations YAML ("group/kind":
// {ignoreDifferences: YAML}), which Argo CD 3.x still reads; a split key
// replaces the older form's rule for the same kind, as in Argo CD.
func ParseSettings(namespace string, argocdCM, cmdParams map[string]string) (Settings, error) {
	s := Settings{
		Namespace:                 namespace,
		TrackingMethod:            TrackingAnnotation,
		InstanceLabelKey:          DefaultInstanceLabelKey,
		IgnoreResourceStatusField: IgnoreStatusAll,
	}
	var errs []error
	bad := func(cm, key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s %s: %s", cm, key, fmt.Sprintf(format, args...)))
	}

	switch tm := strings.TrimSpace(argocdCM[keyTrackingMethod]); tm {
	case "":
	case TrackingAnnotation, TrackingLabel, TrackingAnnotationAndLabel:
		s.TrackingMethod = tm
	default:
		// Argo CD tracks by annotation for a value it does not know.
		bad(ArgoCDConfigMap, keyTrackingMethod, "%q is not annotation, label or annotation+label (Argo CD tracks by annotation)", tm)
	}
	if v := argocdCM[keyInstanceLabelKey]; v != "" {
		s.InstanceLabelKey = v
	}
	s.InstallationID = argocdCM[keyInstallationID]
	s.KustomizeBuildOptions = argocdCM[keyKustomizeBuildOptions]

	rules := map[string]overrideIgnoreDiff{}
	if v := argocdCM[keyCustomizations]; strings.TrimSpace(v) != "" {
		var old map[string]struct {
			IgnoreDifferences string `json:"ignoreDifferences"`
		}
		if err := yaml.Unmarshal([]byte(v), &old); err != nil {
			bad(ArgoCDConfigMap, keyCustomizations, "%v", err)
		}
		for gk, o := range old {
			var r overrideIgnoreDiff
			if err := yaml.Unmarshal([]byte(o.IgnoreDifferences), &r); err != nil {
				bad(ArgoCDConfigMap, keyCustomizations, "%s: ignoreDifferences: %v", gk, err)
				continue
			}
			rules[gk] = r
		}
	}
	for key, v := range argocdCM {
		if !strings.HasPrefix(key, keyCustomizations+".") {
			continue
		}
		parts := strings.SplitN(key, ".", 4)
		if len(parts) < 4 {
			continue
		}
		if !customizationTypes[parts[2]] {
			bad(ArgoCDConfigMap, key, "resource customization type %s is not one Argo CD supports", parts[2])
			continue
		}
		gk, err := overrideKey(parts[3])
		if err != nil {
			bad(ArgoCDConfigMap, key, "%v", err)
			continue
		}
		if parts[2] != "ignoreDifferences" {
			continue
		}
		var r overrideIgnoreDiff
		if err := yaml.Unmarshal([]byte(v), &r); err != nil {
			bad(ArgoCDConfigMap, key, "%v", err)
			continue
		}
		rules[gk] = r
	}
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := rules[k]
		if len(r.JSONPointers)+len(r.JQPathExpressions)+len(r.ManagedFieldsManagers) == 0 {
			continue
		}
		group, kind, _ := strings.Cut(k, "/")
		if !strings.Contains(k, "/") {
			group, kind = "", k
		}
		s.IgnoreDifferences = append(s.IgnoreDifferences, ResourceIgnoreDifferences{
			Group: group, Kind: kind,
			JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions, ManagedFieldsManagers: r.ManagedFieldsManagers,
		})
	}

	if v, ok := argocdCM[keyCompareOptions]; ok && strings.TrimSpace(v) != "" {
		var co struct {
			IgnoreAggregatedRoles     *bool `json:"ignoreAggregatedRoles"`
			IgnoreResourceStatusField any   `json:"ignoreResourceStatusField"`
		}
		if err := yaml.Unmarshal([]byte(v), &co); err != nil {
			bad(ArgoCDConfigMap, keyCompareOptions, "%v", err)
		} else {
			if co.IgnoreAggregatedRoles != nil {
				s.IgnoreAggregatedRoles = *co.IgnoreAggregatedRoles
			}
			switch f := co.IgnoreResourceStatusField.(type) {
			case nil:
			case bool:
				// YAML's off and false: Argo CD reads them as none.
				if f {
					bad(ArgoCDConfigMap, keyCompareOptions, "ignoreResourceStatusField: true is not all, crd or none (Argo CD ignores status on every kind)")
				} else {
					s.IgnoreResourceStatusField = IgnoreStatusNone
				}
			case string:
				switch f {
				case "", IgnoreStatusAll:
				case IgnoreStatusCRD:
					s.IgnoreResourceStatusField = IgnoreStatusCRD
				case IgnoreStatusNone, "off", "false":
					s.IgnoreResourceStatusField = IgnoreStatusNone
				default:
					bad(ArgoCDConfigMap, keyCompareOptions, "ignoreResourceStatusField: %q is not all, crd or none (Argo CD ignores status on every kind)", f)
				}
			default:
				bad(ArgoCDConfigMap, keyCompareOptions, "ignoreResourceStatusField: %v is not all, crd or none (Argo CD ignores status on every kind)", f)
			}
		}
	}

	if v := strings.TrimSpace(cmdParams[keyServerSideDiff]); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(ArgoCDCmdParamsConfigMap, keyServerSideDiff, "%q is not a boolean (Argo CD diffs on the client)", v)
		}
		s.ServerSideDiff = b
	}
	return s, errors.Join(errs...)
}

// overrideKey is the group/kind of a split key's <group_kind>, as Argo CD's
// convertToOverrideKey: group_kind, or kind alone; "all" is every kind.
func overrideKey(groupKind string) (string, error) {
	if groupKind == "all" {
		return "*/*", nil
	}
	parts := strings.Split(groupKind, "_")
	switch {
	case len(parts) == 2:
		return parts[0] + "/" + parts[1], nil
	case len(parts) == 1 && groupKind != "":
		return groupKind, nil
	}
	return "", fmt.Errorf("group kind should be <group>_<kind> or <kind>, got %q", groupKind)
}
