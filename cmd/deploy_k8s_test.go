package cmd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The fields of the Kubernetes objects that the checks read; everything else is ignored.
type (
	k8sMeta struct {
		Name   string
		Labels map[string]string
	}
	k8sConfigMap struct {
		Metadata k8sMeta
		Data     map[string]string
	}
	k8sDeployment struct {
		Spec struct {
			Replicas *int
			Strategy struct{ Type string }
			Template struct {
				Metadata k8sMeta
				Spec     k8sPod
			}
		}
	}
	k8sService struct {
		Metadata k8sMeta
		Spec     struct {
			Selector map[string]string
			Ports    []struct {
				Name       string
				TargetPort string `yaml:"targetPort"`
			}
		}
	}
	k8sServiceMonitor struct {
		APIVersion string `yaml:"apiVersion"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			}
			Endpoints []struct{ Port, Path string }
		}
	}
	k8sPod struct {
		SecurityContext k8sSecurity `yaml:"securityContext"`
		Containers      []k8sContainer
		Volumes         []struct {
			Name      string
			Projected struct{ Sources []k8sSource }
			k8sSource `yaml:",inline"`
		}
	}
	k8sContainer struct {
		Args  []string
		Ports []struct {
			Name          string
			ContainerPort string `yaml:"containerPort"`
		}
		LivenessProbe   k8sProbe    `yaml:"livenessProbe"`
		ReadinessProbe  k8sProbe    `yaml:"readinessProbe"`
		SecurityContext k8sSecurity `yaml:"securityContext"`
		Resources       struct{ Requests, Limits map[string]string }
		VolumeMounts    []struct {
			Name      string
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	// k8sSource is a volume, or a projected volume's source: a Secret or a ConfigMap.
	k8sSource struct {
		Secret *struct {
			Name       string // in a projected volume
			SecretName string `yaml:"secretName"` // in a secret volume
			Items      []k8sItem
		}
		ConfigMap *struct {
			Name  string
			Items []k8sItem
		} `yaml:"configMap"`
	}
	k8sItem  struct{ Key, Path string }
	k8sProbe struct {
		HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
	}
	k8sSecurity struct {
		RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
		RunAsUser                *int  `yaml:"runAsUser"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	}
)

// loadManifest decodes each document of a multi-document YAML file into the object of its kind
// in into (a pointer); every kind of into must be there, once.
func loadManifest(t *testing.T, file string, into map[string]any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var head struct{ Kind string }
		if err := n.Decode(&head); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if obj, ok := into[head.Kind]; ok && !seen[head.Kind] {
			seen[head.Kind] = true
			if err := n.Decode(obj); err != nil {
				t.Fatalf("%s: %s: %v", file, head.Kind, err)
			}
		} else {
			t.Fatalf("%s: unexpected or second object of kind %q", file, head.Kind)
		}
	}
	for kind := range into {
		if !seen[kind] {
			t.Fatalf("%s: no %s", file, kind)
		}
	}
}

// fileSource names what provides a file in the container: kind (Secret or ConfigMap), object and key.
func (p k8sPod) fileSource(c k8sContainer, file string) (kind, name, key string) {
	for _, m := range c.VolumeMounts {
		for _, v := range p.Volumes {
			if v.Name != m.Name || m.MountPath != path.Dir(file) {
				continue
			}
			for _, s := range append(v.Projected.Sources, v.k8sSource) {
				if s.Secret != nil {
					if k := itemKey(s.Secret.Items, path.Base(file)); k != "" {
						return "Secret", s.Secret.Name + s.Secret.SecretName, k
					}
				}
				if s.ConfigMap != nil {
					if k := itemKey(s.ConfigMap.Items, path.Base(file)); k != "" {
						return "ConfigMap", s.ConfigMap.Name, k
					}
				}
			}
		}
	}
	return "", "", ""
}

// itemKey is the key shown as file; without items, every key is a file of its own name.
func itemKey(items []k8sItem, file string) string {
	if len(items) == 0 {
		return file
	}
	for _, it := range items {
		if it.Path == file {
			return it.Key
		}
	}
	return ""
}

// yamlValue shows an optional setting.
func yamlValue(p *int) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(*p)
}

// selects reports whether a label selector matches labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func TestDeployKubernetes(t *testing.T) {
	var (
		cm  k8sConfigMap
		dep k8sDeployment
		svc k8sService
		mon k8sServiceMonitor
	)
	clearEnv(t)
	loadManifest(t, "../deploy/kubernetes/dual-commit.yaml",
		map[string]any{"ConfigMap": &cm, "Deployment": &dep, "Service": &svc, "ServiceMonitor": &mon})
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != "Recreate" {
		t.Errorf("Deployment: want replicas 1 and strategy Recreate (one writer), got %s, %q",
			yamlValue(dep.Spec.Replicas), dep.Spec.Strategy.Type)
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	ctr := pod.Containers[0]

	// Run the args with the ConfigMap's file, as the binary would.
	i := slices.Index(ctr.Args, "--config")
	if i < 0 || i+1 == len(ctr.Args) {
		t.Fatalf("args %q: want --config FILE", ctr.Args)
	}
	kind, name, key := pod.fileSource(ctr, ctr.Args[i+1])
	if kind != "ConfigMap" || name != cm.Metadata.Name || cm.Data[key] == "" {
		t.Fatalf("--config %s: want a file of ConfigMap %s, got %s %q key %q", ctr.Args[i+1], cm.Metadata.Name, kind, name, key)
	}
	args := slices.Clone(ctr.Args)
	args[i+1] = writeConfig(t, cm.Data[key])
	c := dualCommitLine(t, args)
	if flagValue(t, c, "execute") != "true" {
		t.Error("args lack --execute: the Deployment would be a dry run")
	}
	pw := flagValue(t, c, "kafka-sasl-password-file")
	if kind, name, key := pod.fileSource(ctr, pw); kind != "Secret" || name == "" {
		t.Errorf("--kafka-sasl-password-file %q: want a file of a Secret, got %s %q key %q", pw, kind, name, key)
	}

	// Probes, Service and ServiceMonitor on the port --metrics-addr listens on.
	port := metricsPort(t, c)
	var portName string
	for _, p := range ctr.Ports {
		if p.ContainerPort == port {
			portName = p.Name
		}
	}
	if portName == "" {
		t.Fatalf("no named containerPort %s (--metrics-addr)", port)
	}
	onMetrics := func(p string) bool { return p == port || p == portName }
	for _, p := range []struct {
		name, path string
		probe      k8sProbe
	}{{"livenessProbe", "/healthz", ctr.LivenessProbe}, {"readinessProbe", "/readyz", ctr.ReadinessProbe}} {
		if got := p.probe.HTTPGet; got.Path != p.path || !onMetrics(got.Port) {
			t.Errorf("%s: want GET %s on port %s, got %q on %q", p.name, p.path, portName, got.Path, got.Port)
		}
	}
	var svcPort string
	for _, p := range svc.Spec.Ports {
		if onMetrics(p.TargetPort) {
			svcPort = p.Name
		}
	}
	if svcPort == "" || !selects(svc.Spec.Selector, dep.Spec.Template.Metadata.Labels) {
		t.Errorf("Service: want a named port to %s and a selector of the pod's labels, got %+v", portName, svc.Spec)
	}
	if mon.APIVersion != "monitoring.coreos.com/v1" || !selects(mon.Spec.Selector.MatchLabels, svc.Metadata.Labels) ||
		len(mon.Spec.Endpoints) != 1 || mon.Spec.Endpoints[0].Port != svcPort || mon.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor: want monitoring.coreos.com/v1 selecting the Service, /metrics on port %q; got %+v", svcPort, mon)
	}

	// Non-root, read-only, bounded.
	nonRoot := func(s k8sSecurity) bool {
		return s.RunAsNonRoot != nil && *s.RunAsNonRoot && (s.RunAsUser == nil || *s.RunAsUser != 0)
	}
	sc := ctr.SecurityContext
	if !(nonRoot(pod.SecurityContext) || nonRoot(sc)) || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("securityContext: want runAsNonRoot, readOnlyRootFilesystem and no privilege escalation; got pod %+v, container %+v",
			pod.SecurityContext, sc)
	}
	if ctr.Resources.Requests["cpu"] == "" || ctr.Resources.Requests["memory"] == "" || ctr.Resources.Limits["memory"] == "" {
		t.Errorf("resources: want cpu and memory requests and a memory limit, got %+v", ctr.Resources)
	}
}
