{{/*
The prefix of every name: the release's name when it says cellfed, else "<release>-cellfed", so that two
releases in one cell (another CellSet's components) never claim the same ClusterRole.
*/}}
{{- define "cellfed-cell.fullname" -}}
{{- if contains "cellfed" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-cellfed" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on everything the chart makes. */}}
{{- define "cellfed-cell.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cellfed
{{- end -}}

{{/* The cellular resources grouped by API group: {group: [resources]}. */}}
{{- define "cellfed-cell.byGroup" -}}
{{- $groups := dict -}}
{{- range .resources -}}
{{- $_ := set $groups .group (append (get $groups .group | default list) .resource) -}}
{{- end -}}
{{- toYaml $groups -}}
{{- end -}}

{{/* The cellular resources (a list of {group, resource}) that keep a revision history, as a YAML list. */}}
{{- define "cellfed-cell.historyOwners" -}}
{{- $owners := list -}}
{{- range . -}}
{{- if and (eq .group "apps") (has .resource (list "deployments" "statefulsets" "daemonsets")) -}}
{{- $owners = append $owners .resource -}}
{{- end -}}
{{- end -}}
{{- toYaml $owners -}}
{{- end -}}

{{/* Where those keep it (apps resources), as a YAML list: ReplicaSets, ControllerRevisions. */}}
{{- define "cellfed-cell.revisionHistory" -}}
{{- $history := list -}}
{{- range include "cellfed-cell.historyOwners" . | fromYamlArray -}}
{{- $history = append $history (ternary "replicasets" "controllerrevisions" (eq . "deployments")) -}}
{{- end -}}
{{- toYaml ($history | uniq) -}}
{{- end -}}

{{/* A ClusterRoleBinding of `role` to `subjects`, when there are any. */}}
{{- define "cellfed-cell.binding" -}}
{{- if .subjects }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .name }}
  labels:
    {{- include "cellfed-cell.labels" .root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .name }}
subjects:
  {{- toYaml .subjects | nindent 2 }}
{{- end }}
{{- end -}}
