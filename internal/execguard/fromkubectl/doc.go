// Package fromkubectl holds the tests that keep execguard's copy of
// kubectl's command tree (../kubectl.json) true to k8s.io/kubectl, the
// module this project requires: they build kubectl's own tree, compare it
// with the copy (-update rewrites the copy), and run the guard's table of
// command lines through kubectl's own Execute. Only these tests link
// kubectl's commands; the plugin links the copy.
package fromkubectl
