// Package render draws the fleet model for people and for programs: Tree
// draws it as a tree with a row of columns per cluster and, under each
// cluster, the problems worth a look (TreeLines: the same lines, each with
// its cluster, for the live screen); JSON and YAML print the model as one
// document. Rendering is a pure function of the model and Options: nothing
// here talks to a cluster.
package render
