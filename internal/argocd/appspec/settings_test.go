package appspec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name      string
		cm        map[string]string
		params    map[string]string
		want      Settings
		wantErrs  []string
		notInErrs string
	}{
		{
			name: "nothing set reads Argo CD 3.x's defaults",
			want: Settings{Namespace: "argocd", TrackingMethod: TrackingAnnotation, InstanceLabelKey: DefaultInstanceLabelKey, IgnoreResourceStatusField: IgnoreStatusAll},
		},
		{
			name: "every key read",
			cm: map[string]string{
				"application.resourceTrackingMethod":                         "annotation+label",
				"application.instanceLabelKey":                               "argocd.argoproj.io/instance",
				"installationID":                                             "hub-a",
				"kustomize.buildOptions":                                     "--enable-helm --load-restrictor LoadRestrictionsNone",
				"resource.customizations.ignoreDifferences.apps_Deployment":  "jsonPointers:\n- /spec/replicas\njqPathExpressions:\n- .spec.template.spec.initContainers[] | select(.name == \"istio\")\n",
				"resource.customizations.ignoreDifferences._Service":         "managedFieldsManagers:\n- kube-controller-manager\n",
				"resource.customizations.ignoreDifferences.all":              "managedFieldsManagers:\n- hpa\n",
				"resource.customizations.health.cert-manager.io_Certificate": "hs = {}\nreturn hs\n",
				"resource.compareoptions":                                    "ignoreAggregatedRoles: true\nignoreResourceStatusField: crd\n",
			},
			params: map[string]string{"controller.diff.server.side": "true"},
			want: Settings{
				Namespace: "argocd", TrackingMethod: TrackingAnnotationAndLabel, InstanceLabelKey: "argocd.argoproj.io/instance",
				InstallationID: "hub-a", KustomizeBuildOptions: "--enable-helm --load-restrictor LoadRestrictionsNone",
				IgnoreDifferences: []ResourceIgnoreDifferences{
					{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"hpa"}},
					{Group: "", Kind: "Service", ManagedFieldsManagers: []string{"kube-controller-manager"}},
					{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}, JQPathExpressions: []string{`.spec.template.spec.initContainers[] | select(.name == "istio")`}},
				},
				IgnoreAggregatedRoles: true, IgnoreResourceStatusField: IgnoreStatusCRD, ServerSideDiff: true,
			},
		},
		{
			name: "the older resource.customizations form is read, a split key replaces its rule",
			cm: map[string]string{
				"resource.customizations":                                   "admissionregistration.k8s.io/MutatingWebhookConfiguration:\n  ignoreDifferences: |\n    jsonPointers:\n    - /webhooks/0/clientConfig/caBundle\napps/Deployment:\n  ignoreDifferences: |\n    jsonPointers:\n    - /spec/replicas\n",
				"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers:\n- /spec/template/metadata/annotations\n",
				"resource.compareoptions":                                   "ignoreResourceStatusField: off\n",
			},
			want: Settings{
				Namespace: "argocd", TrackingMethod: TrackingAnnotation, InstanceLabelKey: DefaultInstanceLabelKey, IgnoreResourceStatusField: IgnoreStatusNone,
				IgnoreDifferences: []ResourceIgnoreDifferences{
					{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", JSONPointers: []string{"/webhooks/0/clientConfig/caBundle"}},
					{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/template/metadata/annotations"}},
				},
			},
		},
		{
			name: "bad values are errors naming the ConfigMap and key, the rest still read",
			cm: map[string]string{
				"application.resourceTrackingMethod":                        "uid",
				"application.instanceLabelKey":                              "team/app",
				"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: [unclosed\n",
				"resource.customizations.ignoreDifferences.a_b_c":           "jsonPointers:\n- /x\n",
				"resource.customizations.colour.apps_Deployment":            "red",
				"resource.customizations.ignoreDifferences.batch_Job":       "jsonPointers:\n- /spec/suspend\n",
				"resource.compareoptions":                                   "ignoreResourceStatusField: sometimes\n",
			},
			params: map[string]string{"controller.diff.server.side": "yes please"},
			want: Settings{
				Namespace: "argocd", TrackingMethod: TrackingAnnotation, InstanceLabelKey: "team/app", IgnoreResourceStatusField: IgnoreStatusAll,
				IgnoreDifferences: []ResourceIgnoreDifferences{{Group: "batch", Kind: "Job", JSONPointers: []string{"/spec/suspend"}}},
			},
			wantErrs: []string{
				`argocd-cm application.resourceTrackingMethod: "uid"`,
				"argocd-cm resource.customizations.ignoreDifferences.apps_Deployment:",
				"argocd-cm resource.customizations.ignoreDifferences.a_b_c:",
				"argocd-cm resource.customizations.colour.apps_Deployment: resource customization type colour",
				`argocd-cm resource.compareoptions: ignoreResourceStatusField: "sometimes"`,
				`argocd-cmd-params-cm controller.diff.server.side: "yes please" is not a boolean`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSettings("argocd", tt.cm, tt.params)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := len(strings.Split(err.Error(), "\n")); n != len(tt.wantErrs) {
				t.Errorf("%d errors, want %d: %v", n, len(tt.wantErrs), err)
			}
		})
	}
}
