{{- define "cluster.name" -}}{{ .Values.name | default .Release.Name }}{{- end -}}
{{- define "cluster.inMemory" -}}
inMemory:
  vm:
    provisioning:
      startupDuration: {{ .Values.startup | quote }}
  node:
    provisioning:
      startupDuration: {{ .Values.startup | quote }}
  apiServer:
    provisioning:
      startupDuration: {{ .Values.startup | quote }}
  etcd:
    provisioning:
      startupDuration: {{ .Values.startup | quote }}
{{- end -}}
