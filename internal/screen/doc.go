// Package screen is the live screen of `kubectl fleet tree --watch` on a
// terminal: the tree render.Tree draws, redrawn in place in the alternate
// screen each time the watch says the fleet changed, so that a person
// watching a rollout or an outage sees what moves, where, and what cannot
// be seen any more.
//
// A row that changed is marked for a few seconds; a cluster the watch has
// lost says why and since when, and the rest of the fleet goes on. The
// status line counts the clusters watched and disconnected, the events of
// the last minute and the time of the last change. The keys select a
// cluster, filter the tree by path, show or hide drift findings, and open
// the cluster's describe.
//
// The screen reads a watch.Feed and nothing else of the fleet: it talks
// to no cluster itself, except through Options.Describe. It is a
// bubbletea model (model.go: state and keys; view.go: drawing) that Run
// starts on the terminal and ends, with the terminal restored, on q or
// Ctrl-C, when the feed ends, or when its context is done (a signal).
package screen
