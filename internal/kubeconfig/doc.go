// Package kubeconfig turns a kubeconfig read from a cluster's Secret into a
// *rest.Config under one policy, shared by every command.
//
// Such a kubeconfig was written by whoever controls the cluster that holds the
// Secret, so it is untrusted input: an exec credential plugin in it would run a
// program on the operator's machine, and a file path in it (tokenFile,
// client-certificate, client-key, certificate-authority) would make the plugin
// read a local file and send it to a server of the author's choice. The policy
// validates the raw clientcmdapi.Config before anything is built from it, and
// then builds the rest.Config from the allowed, inline fields only; clientcmd's
// own builder is never used because it reads tokenFile eagerly.
//
// Errors name the Secret and the field, never a value from the kubeconfig.
package kubeconfig
