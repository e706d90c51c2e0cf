// Package argocompare compares what an Argo CD Application renders with
// the live objects of its destination as Argo CD's application controller
// compares them (controller/state.go CompareAppState, util/argo/diff and
// gitops-engine's pkg/diff, read for v3.4.0): which objects a sync would
// create, change or prune, object for object the ones the controller
// lists OutOfSync or requiresPruning in the Application's status.resources.
//
// It is pure: the caller renders, fetches the live objects and, for a
// server-side diff, hands a dry-run hook; nothing here talks to a cluster.
//
// Honoured: the client-side three-way diff (kubectl's last-applied
// annotation as the original, a strategic merge patch for the built-in
// kinds of client-go's scheme, a JSON merge patch otherwise, two-way when
// there is no annotation), the remarshal through the typed struct,
// the Secret, Role and tracking normalizations, spec.ignoreDifferences
// and the hub's resource.customizations.ignoreDifferences (jsonPointers,
// jqPathExpressions, managedFieldsManagers), status ignored as
// resource.compareoptions says, the known-types normalization Argo CD
// applies by default (an Argo Rollout's pod template), server-side diff
// where the Application or the hub asks for it (the mutation webhooks'
// changes removed as Argo CD removes them), hooks left out, Prune=false,
// Prune=confirm and IgnoreExtraneous, a tracking id copied to another
// object, and Secrets masked as Argo CD masks them.
//
// Not honoured, and why: the Kubernetes defaulting functions Argo CD runs
// on the predicted object (they live in k8s.io/kubernetes, which this
// module does not bring in): removing a field whose value equals its
// default reads as a change here and not in Argo CD; the structured merge
// diff of Applications synced with ServerSideApply=true, compared here by
// the dry-run when one is given and by the three-way diff otherwise; the
// destination's OpenAPI schemas for custom kinds in managedFieldsManagers
// and server-side diff (a schema deduced from the object is used, lists
// atomic); the hub's knownTypeFields customizations; jqPathExpressions
// unless built with gojq (see jq.go).
package argocompare
