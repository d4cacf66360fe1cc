{{/* The chart's name, truncated as Kubernetes names must be. */}}
{{- define "cellfed.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's base name: the release name, with the chart's name when it is not in it already. */}}
{{- define "cellfed.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's resource name: `<fullname>-<component>`, e.g. `cellfed-router`. */}}
{{- define "cellfed.componentName" -}}
{{- printf "%s-%s" (include "cellfed.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on everything the chart makes. */}}
{{- define "cellfed.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "cellfed.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cellfed
{{- with .Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels that select one component's pods (stable across upgrades). */}}
{{- define "cellfed.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cellfed.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of one component's resources. */}}
{{- define "cellfed.componentLabels" -}}
{{ include "cellfed.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Where the cells' Secrets and the Leases are: global.secretNamespace, else the release namespace. */}}
{{- define "cellfed.secretNamespace" -}}
{{- default .Release.Namespace .Values.global.secretNamespace -}}
{{- end -}}

{{/* Where a component reads the cells' kubeconfig Secrets: its credentialsNamespace, else the secret namespace. */}}
{{- define "cellfed.credentialsNamespace" -}}
{{- default (include "cellfed.secretNamespace" .root) .values.credentialsNamespace -}}
{{- end -}}

{{/* A component's image: repository, then @digest or :tag (default: the chart's appVersion). */}}
{{- define "cellfed.image" -}}
{{- $image := .values.image -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default .root.Chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The flags every component takes. */}}
{{- define "cellfed.commonArgs" -}}
- --cellset={{ .root.Values.global.cellSet }}
- --secret-namespace={{ include "cellfed.secretNamespace" .root }}
{{- if .values.credentialsNamespace }}
- --credentials-namespace={{ .values.credentialsNamespace }}
{{- end }}
- --http-port={{ .values.metricsPort }}
- --log-level={{ .values.logLevel | default .root.Values.global.logLevel }}
{{- with .root.Values.global.tracing }}
{{- if .otlpEndpoint }}
- --otlp-endpoint={{ .otlpEndpoint }}
- --trace-sample-ratio={{ .sampleRatio }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The flags of a leader-elected controller. */}}
{{- define "cellfed.leaderArgs" -}}
- --leader-elect={{ .values.leaderElection.enabled }}
- --leader-elect-lease-duration={{ .values.leaderElection.leaseDuration }}
- --leader-elect-renew-deadline={{ .values.leaderElection.renewDeadline }}
- --leader-elect-retry-period={{ .values.leaderElection.retryPeriod }}
{{- end -}}

{{/*
The Deployment of one component. Takes a dict: root (the chart's context), component (its name), values
(its values), args (its own flags, a list), ports (extra container ports, a list), volumes and volumeMounts
(lists).
*/}}
{{- define "cellfed.deployment" -}}
{{- $values := .values -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
spec:
  {{- if not (and (hasKey $values "autoscaling") $values.autoscaling.enabled) }}
  replicas: {{ $values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "cellfed.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "cellfed.selectorLabels" . | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- include "cellfed.podIdentity" . | nindent 6 }}
      containers:
        - name: {{ .component }}
          image: {{ include "cellfed.image" . | quote }}
          imagePullPolicy: {{ $values.image.pullPolicy }}
          args:
            {{- include "cellfed.commonArgs" . | nindent 12 }}
            {{- with .args }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $values.extraArgs }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: http-metrics
              containerPort: {{ $values.metricsPort }}
              protocol: TCP
            {{- with .ports }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http-metrics
            {{- toYaml $values.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http-metrics
            {{- toYaml $values.readinessProbe | nindent 12 }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml .root.Values.global.containerSecurityContext | nindent 12 }}
          {{- with .volumeMounts }}
          volumeMounts:
            {{- toYaml . | nindent 12 }}
          {{- end }}
      {{- with .volumes }}
      volumes:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "cellfed.podPlacement" . }}
      {{- . | trim | nindent 6 }}
      {{- end }}
{{- end -}}

{{/* Who a component's pods run as: its ServiceAccount, the pull secrets, priority and security context. */}}
{{- define "cellfed.podIdentity" -}}
serviceAccountName: {{ include "cellfed.componentName" . }}
automountServiceAccountToken: true
{{- with .root.Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.global.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.global.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Where a component's pods may run (its values' nodeSelector, tolerations, affinity, spread). */}}
{{- define "cellfed.podPlacement" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A component's ServiceAccount. */}}
{{- define "cellfed.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
  {{- with .values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* A component's PodDisruptionBudget. */}}
{{- define "cellfed.podDisruptionBudget" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
spec:
  {{- if hasKey .values.podDisruptionBudget "maxUnavailable" }}
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  {{- else }}
  minAvailable: {{ .values.podDisruptionBudget.minAvailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "cellfed.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* The Service in front of a component's /metrics (what a ServiceMonitor scrapes). */}}
{{- define "cellfed.metricsService" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "cellfed.componentName" . }}-metrics
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
spec:
  type: ClusterIP
  ports:
    - name: http-metrics
      port: {{ .values.metricsPort }}
      targetPort: http-metrics
      protocol: TCP
  selector:
    {{- include "cellfed.selectorLabels" . | nindent 4 }}
{{- end -}}

{{/* A component's ServiceMonitor (prometheus-operator). */}}
{{- define "cellfed.serviceMonitor" -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
    {{- with .root.Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "cellfed.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: http-metrics
      path: /metrics
      interval: {{ .root.Values.metrics.serviceMonitor.interval }}
      scrapeTimeout: {{ .root.Values.metrics.serviceMonitor.scrapeTimeout }}
{{- end -}}

{{/*
The Role and RoleBinding every controller needs in the secret namespace (the cells' kubeconfig Secrets, its
leader Lease) and in `default` (Events about the cluster-scoped CellSet land there).
*/}}
{{- define "cellfed.controllerNamespaceRbac" -}}
{{- $credentials := include "cellfed.credentialsNamespace" . -}}
{{- $shared := include "cellfed.secretNamespace" .root -}}
{{- /* A credentials namespace is one component's alone: two sharing one would read each other's. */ -}}
{{- $own := list .root.Values.router.credentialsNamespace .root.Values.rebalanceController.credentialsNamespace .root.Values.backupController.credentialsNamespace | compact -}}
{{- if ne (len $own) (len (uniq $own)) -}}
{{- fail "router, rebalanceController and backupController: each credentialsNamespace must be that component's alone (two components given one would read each other's cell credentials)" -}}
{{- end -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ $shared }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
rules:
  {{- if eq $credentials $shared }}
  # The cells' kubeconfig Secrets, shared with the other components (credentialsNamespace empty).
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]
  {{- end }}
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, list, watch, create, update, patch, delete]
  {{- if eq .component "router" }}
  # Node-port claims (docs/routing.md#node-ports): before a write gives a Service node ports, the router
  # claims them in the control plane's allocator, in a Service here holding only the ports, so that no two
  # cells give out the same one; written only once the caller is allowed its write.
  - apiGroups: [""]
    resources: [services]
    verbs: [get, create, update, delete]
  {{- else if eq .component "rebalance-controller" }}
  # The router's node-port claims: one no cell's Service holds any more (after a collection delete, a
  # router stopped mid-write) is freed; one that holds other ports than its Service is written again.
  - apiGroups: [""]
    resources: [services]
    verbs: [list, watch, update, delete]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cellfed.componentName" . }}
  namespace: {{ include "cellfed.secretNamespace" .root }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cellfed.componentName" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "cellfed.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
---
{{- if ne $credentials $shared }}
# The cells' kubeconfig Secrets of this component alone: no other component may read this namespace.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cellfed.componentName" . }}-credentials
  namespace: {{ $credentials }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cellfed.componentName" . }}-credentials
  namespace: {{ $credentials }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cellfed.componentName" . }}-credentials
subjects:
  - kind: ServiceAccount
    name: {{ include "cellfed.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
---
{{- end }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cellfed.componentName" . }}-events
  namespace: default
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
rules:
  - apiGroups: [events.k8s.io]
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cellfed.componentName" . }}-events
  namespace: default
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cellfed.componentName" . }}-events
subjects:
  - kind: ServiceAccount
    name: {{ include "cellfed.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{/* A ClusterRoleBinding of a component's ClusterRole to its ServiceAccount. */}}
{{- define "cellfed.clusterRoleBinding" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "cellfed.componentName" . }}
  labels:
    {{- include "cellfed.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "cellfed.componentName" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "cellfed.componentName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}
