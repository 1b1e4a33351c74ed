package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/burstpool/burstpool/test/burst"
)

// kubelet is the simulated cloud's image model: it tells kwok when each
// fake node is Ready and when each pod on one runs, by writing
// burst.AnnotationStartAt, from the times burst.Cloud models.
type kubelet struct {
	cloud burst.Cloud
	cs    kubernetes.Interface
	nodes listersv1.NodeLister
	pods  listersv1.PodLister

	mu    sync.Mutex
	known map[string]*burst.Node
	start map[types.UID]time.Time
}

func startKubelet(ctx context.Context, cs kubernetes.Interface, cloud burst.Cloud) *kubelet {
	f := informers.NewSharedInformerFactory(cs, 0)
	k := &kubelet{cloud: cloud, cs: cs, nodes: f.Core().V1().Nodes().Lister(), pods: f.Core().V1().Pods().Lister(),
		known: map[string]*burst.Node{}, start: map[types.UID]time.Time{}}
	// A node's launch counts from when it appears.
	_, _ = f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && n.Annotations["kwok.x-k8s.io/node"] == "fake" {
			k.mu.Lock()
			if _, ok := k.known[n.Name]; !ok {
				k.known[n.Name] = cloud.NewNode(time.Now())
			}
			k.mu.Unlock()
		}
	}})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	go wait.UntilWithContext(ctx, k.tick, 100*time.Millisecond)
	return k
}

// tick annotates the nodes and the bound pods that lack a start time.
// A failed patch is retried on the next tick with the same time.
func (k *kubelet) tick(ctx context.Context) {
	ns, _ := k.nodes.List(labels.Everything())
	for _, n := range ns {
		k.mu.Lock()
		kn, ok := k.known[n.Name]
		k.mu.Unlock()
		if ok && n.Annotations[burst.AnnotationStartAt] == "" {
			k.annotate(func(p []byte) error {
				_, err := k.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, p, metav1.PatchOptions{})
				return err
			}, kn.Ready)
		}
	}
	ps, _ := k.pods.List(labels.Everything())
	now := time.Now()
	for _, p := range ps {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Annotations[burst.AnnotationStartAt] != "" {
			continue
		}
		k.mu.Lock()
		kn, ok := k.known[p.Spec.NodeName]
		at, started := k.start[p.UID]
		if ok && !started {
			at = k.cloud.Start(kn, now, images(p))
			k.start[p.UID] = at
		}
		k.mu.Unlock()
		if !ok {
			continue
		}
		k.annotate(func(b []byte) error {
			_, err := k.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, b, metav1.PatchOptions{})
			return err
		}, at)
	}
}

func (k *kubelet) annotate(patch func([]byte) error, at time.Time) {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		burst.AnnotationStartAt: at.UTC().Format(time.RFC3339Nano),
	}}})
	_ = patch(b) // retried on the next tick
}

func images(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	return out
}
