package execguard

// reads are the kubectl commands that only read, by their path below
// kubectl, each with why. A command is here when it reads from the cluster,
// from the kubeconfig kubectl fleet hands to kubectl, or from kubectl's own
// help, and writes nothing anywhere: no object on the cluster, no file on
// this machine, no listener, nothing run inside a workload. Everything
// else, every command of a later kubectl and every plugin included, needs
// --allow-write.
//
// Left out on purpose, with the reason:
//   - cluster-info dump: --output-directory writes files on this machine,
//     and from every cluster into the same directory.
//   - kustomize: reads local directories and remote git URLs, and runs
//     KRM function containers and executables with its alpha flags.
//   - config (but its reads below): writes the kubeconfig file.
//   - apply (but view-last-applied), rollout (but status and history):
//     write. A group command alone (rollout, auth, top, config) prints
//     its help: nothing to run on each cluster.
//   - completion, plugin list, kuberc view: read nothing of a cluster;
//     there is nothing to run on each cluster of a fleet.
//   - proxy, port-forward: open a listener on this machine into each
//     cluster. exec, attach, cp, debug: act inside the workloads (debug
//     also creates pods and ephemeral containers).
var reads = map[string]string{
	"get":                     "GETs and watches objects; `--raw` sends only GETs",
	"describe":                "GETs an object and its events",
	"logs":                    "reads containers' logs",
	"top node":                "reads the metrics API",
	"top pod":                 "reads the metrics API",
	"explain":                 "reads the OpenAPI schema",
	"api-resources":           "reads discovery",
	"api-versions":            "reads discovery",
	"version":                 "reads /version",
	"cluster-info":            "reads the control plane's Services",
	"events":                  "lists and watches Events",
	"wait":                    "watches objects until a condition holds, `--for=delete` too",
	"diff":                    "a server-side dry run: the apiserver persists nothing",
	"auth can-i":              "a SelfSubjectAccessReview, which the apiserver answers and persists nothing of",
	"auth whoami":             "a SelfSubjectReview, which the apiserver answers and persists nothing of",
	"rollout status":          "watches a rollout",
	"rollout history":         "reads revisions",
	"apply view-last-applied": "prints the last-applied annotation",
	// kubectl fleet hands kubectl a kubeconfig of one cluster, in a file of
	// its own, and refuses --kubeconfig: these print that kubeconfig,
	// without its credentials unless --raw (get-kubeconfig hands out the
	// same).
	"config view":            "prints the kubeconfig kubectl fleet handed over",
	"config current-context": "prints the kubeconfig kubectl fleet handed over",
	"config get-contexts":    "prints the kubeconfig kubectl fleet handed over",
	"config get-clusters":    "prints the kubeconfig kubectl fleet handed over",
	"config get-users":       "prints the kubeconfig kubectl fleet handed over",
	"help":                   "kubectl's own help",
	"options":                "kubectl's own help",
}

// listener are the commands that open a listener on this machine.
var listener = map[string]bool{"proxy": true, "port-forward": true}

// inside are the commands that act inside the cluster's workloads.
var inside = map[string]bool{"exec": true, "attach": true, "cp": true, "debug": true}
