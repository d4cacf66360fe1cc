// Command informer runs one client-go shared informer of a resource through the kubeconfig it is given, as a
// controller would: dynamic (JSON), or with -protobuf typed and accepting protobuf alone, as kube components
// configured for protobuf do. Each line read on stdin makes it print, as one JSON line, its cache and
// what its event handlers were told; it exits when stdin closes. The e2e suite runs it through the router
// and against one plain apiserver, and compares what each ends with.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// object is what the suite compares of one cached object.
type object struct {
	Namespace         string            `json:"namespace"`
	Name              string            `json:"name"`
	UID               string            `json:"uid"`
	CreationTimestamp string            `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// report is one answer to a line on stdin.
type report struct {
	Synced  bool     `json:"synced"`
	Objects []object `json:"objects"`
	// Handler calls: adds (initial list and later), updates, deletes.
	Adds    int `json:"adds"`
	Updates int `json:"updates"`
	Deletes int `json:"deletes"`
	// Updates whose new object has another uid than the old one: a copy switched under a known key.
	UIDChanges int `json:"uidChanges"`
	// Keys deleted and added again later (an object that vanished for a while).
	Readded int `json:"readded"`
	// The Content-Type of each answer to a list or watch, as "list <type>" or "watch <type>", counted.
	Answers map[string]int `json:"answers"`
}

// answerTypes counts the content types lists and watches are answered in.
type answerTypes struct {
	mu     sync.Mutex
	counts map[string]int
	next   http.RoundTripper
}

func (a *answerTypes) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := a.next.RoundTrip(request)
	if err != nil || request.Method != http.MethodGet || response.StatusCode != http.StatusOK {
		return response, err
	}
	kind := "list"
	if request.URL.Query().Get("watch") != "" {
		kind = "watch"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts[kind+" "+response.Header.Get("Content-Type")]++
	return response, err
}

func (a *answerTypes) snapshot() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	copied := map[string]int{}
	for key, count := range a.counts {
		copied[key] = count
	}
	return copied
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "", "namespace to watch (all when empty)")
	resource := flag.String("resource", "apps/v1/deployments", "group/version/resource, or version/resource for the core group")
	protobuf := flag.Bool("protobuf", false, "a typed informer that accepts application/vnd.kubernetes.protobuf only")
	flag.Parse()
	if err := run(*kubeconfig, *namespace, *resource, *protobuf); err != nil {
		fmt.Fprintf(os.Stderr, "informer: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace, resource string, protobuf bool) error {
	gvr, err := parseResource(resource)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	answers := &answerTypes{counts: map[string]int{}}
	config.Wrap(func(next http.RoundTripper) http.RoundTripper {
		answers.next = next
		return answers
	})
	informer, err := newInformer(config, gvr, namespace, protobuf)
	if err != nil {
		return err
	}

	var mu sync.Mutex
	counts := report{}
	deleted := map[string]bool{}
	key := func(obj any) string {
		k, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		return k
	}
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			mu.Lock()
			defer mu.Unlock()
			counts.Adds++
			if deleted[key(obj)] {
				counts.Readded++
				delete(deleted, key(obj))
			}
		},
		UpdateFunc: func(old, new any) {
			mu.Lock()
			defer mu.Unlock()
			counts.Updates++
			if accessor(old).GetUID() != accessor(new).GetUID() {
				counts.UIDChanges++
			}
		},
		DeleteFunc: func(obj any) {
			mu.Lock()
			defer mu.Unlock()
			counts.Deletes++
			deleted[key(obj)] = true
		},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.Run(ctx.Done())

	lines := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for lines.Scan() {
		mu.Lock()
		answer := counts
		mu.Unlock()
		answer.Synced = informer.HasSynced()
		answer.Answers = answers.snapshot()
		answer.Objects = []object{}
		for _, item := range informer.GetStore().List() {
			u := accessor(item)
			answer.Objects = append(answer.Objects, object{
				Namespace:         u.GetNamespace(),
				Name:              u.GetName(),
				UID:               string(u.GetUID()),
				CreationTimestamp: u.GetCreationTimestamp().UTC().Format(metav1.RFC3339Micro),
				Labels:            u.GetLabels(),
				Annotations:       u.GetAnnotations(),
			})
		}
		sort.Slice(answer.Objects, func(i, j int) bool {
			a, b := answer.Objects[i], answer.Objects[j]
			return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
		})
		if err := out.Encode(answer); err != nil {
			return err
		}
	}
	return lines.Err()
}

func newInformer(config *rest.Config, gvr schema.GroupVersionResource, namespace string, protobuf bool) (cache.SharedIndexInformer, error) {
	if !protobuf {
		client, err := dynamic.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		return dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil).ForResource(gvr).Informer(), nil
	}
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	generic, err := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace)).ForResource(gvr)
	if err != nil {
		return nil, err
	}
	return generic.Informer(), nil
}

// accessor reads an informer's object, dynamic or typed, or a deleted one's last state.
func accessor(obj any) metav1.Object {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	object, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("not an object: %T", obj))
	}
	return object
}

func parseResource(value string) (schema.GroupVersionResource, error) {
	parts := strings.Split(value, "/")
	switch len(parts) {
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, nil
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("resource %q: want group/version/resource or version/resource", value)
}
