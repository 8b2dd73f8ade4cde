// Package check holds the Kubernetes manifests of deploy/k8s to the API
// types of k8s.io/api: each document is decoded strictly (an unknown or
// misspelt field fails), as written and as kustomize's build puts it out
// (build_test.go), and the parts that must agree with each other and with
// serve's shutdown do. It holds deploy/docker-compose.yml to the Compose
// specification the same way (compose_test.go). It is a module of its own
// so that the Kubernetes API types, kustomize and compose-go stay out of
// the server's dependencies.
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// kinds are the types each manifest may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"v1/ConfigMap":                           func() any { return &corev1.ConfigMap{} },
	"v1/Service":                             func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                    func() any { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy":     func() any { return &networkingv1.NetworkPolicy{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
}

// kustomization is the part of kustomize's Kustomization the directory
// uses, decoded as strictly, so that a field kustomize would ignore or
// misread fails here (the build itself runs in build_test.go).
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Resources       []string `json:"resources"`
	SecretGenerator []struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	} `json:"secretGenerator"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// strict decodes YAML into v, refusing fields v does not have.
func strict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// load decodes every document of every resource the kustomization lists.
func load(t *testing.T) (map[string]any, kustomization) {
	t.Helper()
	dir := ".."
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := strict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" || len(k.Resources) == 0 {
		t.Fatalf("kustomization.yaml: %s %s with %d resources", k.APIVersion, k.Kind, len(k.Resources))
	}
	objs := map[string]any{}
	listed := map[string]bool{}
	for _, res := range k.Resources {
		listed[res] = true
		b, err := os.ReadFile(filepath.Join(dir, res))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s, document %d: %v", res, i+1, err)
			}
			mk := kinds[head.APIVersion+"/"+head.Kind]
			if mk == nil {
				t.Fatalf("%s, document %d: no API type known for %s %s", res, i+1, head.APIVersion, head.Kind)
			}
			obj := mk()
			if err := strict([]byte(doc), obj); err != nil {
				t.Errorf("%s, document %d (%s %s): %v", res, i+1, head.Kind, head.Metadata.Name, err)
				continue
			}
			objs[head.Kind+"/"+head.Metadata.Name] = obj
		}
	}
	// Every manifest of the directory is a resource of the kustomization.
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !listed[b] {
			t.Errorf("%s is not among the kustomization's resources", b)
		}
	}
	return objs, k
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs, _ := load(t)
	for _, want := range []string{"Deployment/aq-front", "StatefulSet/aq-member", "HorizontalPodAutoscaler/aq-front",
		"Service/aq-http", "Service/aq-members", "ConfigMap/aditus-queue"} {
		if objs[want] == nil {
			t.Errorf("no %s among the manifests", want)
		}
	}
}

// A misspelt field is refused: the check is not a pass-through.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	doc := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n")
	if err := strict(doc, &appsv1.Deployment{}); err == nil || !strings.Contains(err.Error(), "replica") {
		t.Fatalf("a Deployment with spec.replica: %v, want an unknown-field error", err)
	}
}

// serveShutdown is the longest serve takes after SIGTERM to drain HTTP
// (serve.go), and memberLeave what a member adds: its rooms' hand-over
// (two provider rounds and a half, about 2.5 s) and protoactor's 2 s.
const (
	serveShutdown = 15
	memberLeave   = 5
)

// The fronts scale by the HPA and drain within their grace period; the
// members hand over within theirs.
func TestShutdownFitsTheGracePeriod(t *testing.T) {
	objs, _ := load(t)
	hpa, _ := objs["HorizontalPodAutoscaler/aq-front"].(*autoscalingv2.HorizontalPodAutoscaler)
	front, _ := objs["Deployment/aq-front"].(*appsv1.Deployment)
	member, _ := objs["StatefulSet/aq-member"].(*appsv1.StatefulSet)
	if hpa == nil || front == nil || member == nil {
		t.Fatal("the fronts' Deployment, their HPA or the members' StatefulSet is missing")
	}
	ref := hpa.Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.Name != front.Name || ref.APIVersion != "apps/v1" {
		t.Errorf("the HPA scales %s %s %s, not the fronts' Deployment %s", ref.APIVersion, ref.Kind, ref.Name, front.Name)
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 || hpa.Spec.MaxReplicas <= *hpa.Spec.MinReplicas {
		t.Errorf("the HPA's replicas: min %v max %d, want at least 2 and room to grow", hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
	var cpu, rps bool
	for _, m := range hpa.Spec.Metrics {
		cpu = cpu || (m.Resource != nil && m.Resource.Name == corev1.ResourceCPU)
		rps = rps || (m.Pods != nil && strings.HasPrefix(m.Pods.Metric.Name, "aditus_queue_http_requests"))
	}
	if !cpu || !rps {
		t.Errorf("the HPA's metrics: CPU %v, requests per second %v; want both", cpu, rps)
	}
	for _, c := range []struct {
		name  string
		spec  corev1.PodSpec
		extra int64
	}{
		{"fronts", front.Spec.Template.Spec, 0},
		{"members", member.Spec.Template.Spec, memberLeave},
	} {
		if err := fits(c.spec, c.extra); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// fits checks that the container's preStop sleep, serve's drain and extra
// seconds fit in the pod's termination grace period.
func fits(spec corev1.PodSpec, extra int64) error {
	if len(spec.Containers) != 1 {
		return fmt.Errorf("%d containers, want 1", len(spec.Containers))
	}
	lc := spec.Containers[0].Lifecycle
	if lc == nil || lc.PreStop == nil || lc.PreStop.Sleep == nil {
		return fmt.Errorf("no preStop sleep: the Service would still send requests after SIGTERM")
	}
	if spec.TerminationGracePeriodSeconds == nil {
		return fmt.Errorf("no terminationGracePeriodSeconds")
	}
	need := lc.PreStop.Sleep.Seconds + serveShutdown + extra
	if got := *spec.TerminationGracePeriodSeconds; got < need {
		return fmt.Errorf("terminationGracePeriodSeconds %d, want at least %d (preStop %d s + drain %d s + %d s)",
			got, need, lc.PreStop.Sleep.Seconds, serveShutdown, extra)
	}
	return nil
}
