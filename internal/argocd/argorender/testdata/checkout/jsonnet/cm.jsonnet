{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "j" } }
