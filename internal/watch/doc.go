// Package watch keeps a walked fleet up to date: one watch per cluster per
// kind the walk listed, started at the resourceVersion of the walk's own
// list, over the cluster's one connection. It turns what the watches see
// into Events (the JSON stream) and Snapshots (the live screen), apart from
// how either is drawn.
package watch
