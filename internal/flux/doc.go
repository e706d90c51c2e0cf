// Package flux reads the state of the Flux objects on one cluster into the
// fleet model: Kustomizations and HelmReleases (what is applied) and the
// sources they come from (GitRepository, OCIRepository, HelmRepository).
//
// A cluster that does not serve a Flux API simply has none of its objects;
// a cluster that serves none of them does not run Flux.
package flux
