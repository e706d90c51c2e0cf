//go:build linux

package bench_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// diffRepoURL is the repository of the diff bench's checkout: its remote,
// which no server serves.
const diffRepoURL = "https://git.example/bench-apps.git"

// Source types of the diff bench's Applications, as Argo CD names them.
const (
	typeDirectory = "Directory"
	typeKustomize = "Kustomize"
	typeHelm      = "Helm"
)

// Drifts of the diff bench's apps: what differs between the checkout and
// the live objects.
const (
	inSync     = "in sync"
	handEdited = "configured"  // the live ConfigMap edited by hand
	missing    = "created"     // the Service never applied
	leftOver   = "pruned"      // a ConfigMap applied before, rendered no more
	legacyName = "-web-legacy" // the left-over ConfigMap's name, after the app's
)

// benchApp is one unit of the diff bench: an Argo CD Application and the
// Flux Kustomization of the same manifests beside it.
type benchApp struct {
	name, team string
	// spoke: the app deploys to the hub's child spoke, not the hub.
	spoke bool
	// source is the Application's source type.
	source string
	drift  string
	// automated: the Application syncs itself, pruning.
	automated bool
}

// benchApps are n apps: directory, Kustomize and Helm sources in turn,
// every fifth deploying to the spoke, ten to a team's namespace, half
// automated (two in four), six in ten in sync, two hand-edited, one
// missing an object, one with an object left over.
func benchApps(n int) []benchApp {
	apps := make([]benchApp, n)
	for i := range apps {
		a := benchApp{
			name: fmt.Sprintf("app-%04d", i+1), team: fmt.Sprintf("team-%02d", i/10+1),
			spoke: i%5 == 4, source: []string{typeDirectory, typeKustomize, typeHelm}[i%3], automated: i%4 < 2,
		}
		switch i % 10 {
		case 6, 7:
			a.drift = handEdited
		case 8:
			a.drift = missing
		case 9:
			a.drift = leftOver
		default:
			a.drift = inSync
		}
		apps[i] = a
	}
	return apps
}

// argoPath is the path in the checkout of the app's Application source.
func (a benchApp) argoPath() string {
	switch a.source {
	case typeKustomize:
		return "overlays/" + a.name
	case typeHelm:
		return "charts/web"
	}
	return "apps/" + a.name
}

// fluxPath is the path of the app's Kustomization: the Application's,
// but for a Helm app (a Kustomization renders no chart) a directory of
// the same five objects.
func (a benchApp) fluxPath() string {
	if a.source == typeHelm {
		return "plain/" + a.name
	}
	return a.argoPath()
}

// writeDiffCheckout writes, commits and returns a checkout of
// diffRepoURL holding the apps' sources: a directory of five manifests
// per directory app, a Kustomize base and an overlay per Kustomize app,
// a Helm chart and a values file per Helm app beside it (in the chart
// directory, each render would load them all: Helm reads every file of a
// chart), and, for the Flux side, a directory of the same objects.
func writeDiffCheckout(b *testing.B, apps []benchApp) string {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{}
	for name, content := range webManifests("", "base") {
		files["base/"+name] = content
	}
	files["base/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" +
		"  - serviceaccount.yaml\n  - configmap.yaml\n  - secret.yaml\n  - service.yaml\n  - deployment.yaml\n"
	for name, content := range webChart() {
		files["charts/web/"+name] = content
	}
	for i, a := range apps {
		switch a.source {
		case typeDirectory:
			for name, content := range webManifests(a.name+"-", a.name) {
				files["apps/"+a.name+"/"+name] = content
			}
		case typeKustomize:
			files["overlays/"+a.name+"/kustomization.yaml"] = fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
patches:
  - target: {kind: ConfigMap, name: web-config}
    patch: |-
      - op: replace
        path: /data/level
        value: %s
`, a.name)
		case typeHelm:
			files["values/"+a.name+".yaml"] = fmt.Sprintf("level: %s\nreplicaCount: %d\nproperties:\n  owner: %s\n  shard: \"%d\"\n", a.name, 2+i%3, a.team, i%7)
			for name, content := range webManifests(a.name+"-", a.name) {
				files["plain/"+a.name+"/"+name] = content
			}
		}
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil { //nolint:gosec // a checkout for the bench
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"remote", "add", "origin", diffRepoURL}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "apps"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// properties is a ConfigMap's application.properties, about 1 KB.
func properties(app string) string {
	var s strings.Builder
	for i := range 24 {
		fmt.Fprintf(&s, "    %s.setting.%02d = value-%02d\n", app, i, i*7%13)
	}
	return s.String()
}

// webManifests are a web app's five objects, named prefix+"web…": a
// ServiceAccount, a ConfigMap, a Secret, a Service and a Deployment, as a
// real app has them. The Service is headless: the sandbox's apiserver has
// a few hundred cluster IPs, fewer than the bench's Services.
func webManifests(prefix, app string) map[string]string {
	labels := fmt.Sprintf("app.kubernetes.io/name: web\n    app.kubernetes.io/part-of: %s", app)
	password := base64.StdEncoding.EncodeToString([]byte("bench-password-of-" + app))
	return map[string]string{
		"serviceaccount.yaml": fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %sweb\n  labels:\n    %s\n", prefix, labels),
		"configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %sweb-config\n  labels:\n    %s\ndata:\n  level: one\n  application.properties: |\n%s",
			prefix, labels, properties(app)),
		"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %sweb-credentials\n  labels:\n    %s\ntype: Opaque\ndata:\n  password: %s\n",
			prefix, labels, password),
		"service.yaml": fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]sweb
  labels:
    %[2]s
spec:
  clusterIP: None
  selector:
    app.kubernetes.io/name: web
    app.kubernetes.io/part-of: %[3]s
  ports:
    - name: http
      port: 80
      targetPort: http
`, prefix, labels, app),
		"deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]sweb
  labels:
    %[2]s
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: web
      app.kubernetes.io/part-of: %[3]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
        app.kubernetes.io/part-of: %[3]s
    spec:
      serviceAccountName: %[1]sweb
      containers:
        - name: web
          image: nginx:1.27.3
          ports:
            - name: http
              containerPort: 8080
          envFrom:
            - configMapRef:
                name: %[1]sweb-config
          env:
            - name: PASSWORD
              valueFrom:
                secretKeyRef:
                  name: %[1]sweb-credentials
                  key: password
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 256Mi
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
`, prefix, labels, app),
	}
}

// webChart is a Helm chart of the same five objects, named after the
// release, as charts are written.
func webChart() map[string]string {
	return map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.4.2\nappVersion: \"1.27.3\"\n",
		"values.yaml": "replicaCount: 2\nimage:\n  repository: nginx\n  tag: \"1.27.3\"\nlevel: one\nproperties: {}\nresources:\n  requests:\n    cpu: 100m\n    memory: 128Mi\n  limits:\n    memory: 256Mi\n",
		"templates/_helpers.tpl": `{{- define "web.labels" -}}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
app.kubernetes.io/name: web
app.kubernetes.io/part-of: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- define "web.selector" -}}
app.kubernetes.io/name: web
app.kubernetes.io/part-of: {{ .Release.Name }}
{{- end }}
`,
		"templates/serviceaccount.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}-web\n  labels:\n    {{- include \"web.labels\" . | nindent 4 }}\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-web-config
  labels:
    {{- include "web.labels" . | nindent 4 }}
data:
  level: {{ .Values.level | quote }}
  application.properties: |
    {{- range $k, $v := .Values.properties }}
    {{ $.Release.Name }}.{{ $k }} = {{ $v }}
    {{- end }}
`,
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-web-credentials
  labels:
    {{- include "web.labels" . | nindent 4 }}
type: Opaque
data:
  password: {{ printf "bench-password-of-%s" .Release.Name | b64enc | quote }}
`,
		"templates/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-web
  labels:
    {{- include "web.labels" . | nindent 4 }}
spec:
  clusterIP: None
  selector:
    {{- include "web.selector" . | nindent 4 }}
  ports:
    - name: http
      port: 80
      targetPort: http
`,
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    {{- include "web.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels:
      {{- include "web.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "web.selector" . | nindent 8 }}
    spec:
      serviceAccountName: {{ .Release.Name }}-web
      containers:
        - name: web
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          ports:
            - name: http
              containerPort: 8080
          envFrom:
            - configMapRef:
                name: {{ .Release.Name }}-web-config
          env:
            - name: PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{ .Release.Name }}-web-credentials
                  key: password
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
`,
	}
}
