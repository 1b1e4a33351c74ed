package capacity

import (
	"time"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

type podOpt func(*Pod)

func executor(ns, name, pool, qs string, opts ...podOpt) *Pod {
	p := &Pod{
		Namespace: ns, Name: name, UID: "uid-" + name, Pool: pool,
		Labels: map[string]string{
			qsv1alpha1.LabelPool:         pool,
			qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool,
			qsv1alpha1.LabelQueryService: qs,
			qsv1alpha1.LabelComponent:    qsv1alpha1.ComponentExecutor,
		},
		State:   PodPending,
		Started: t0,
		// Not yet bound: the scheduler found no room on the pool's nodes,
		// which it asks for.
		Unschedulable: true,
		Aim:           &Aim{NodeSelector: map[string]string{qsv1alpha1.LabelPool: pool}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func warmPod(name, pool, image, node string, opts ...podOpt) *Pod {
	p := &Pod{
		Namespace: "team-a", Name: name, Pool: pool, Image: image, NodeName: node,
		Labels: map[string]string{
			qsv1alpha1.LabelPool:      pool,
			qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup,
		},
		State: PodRunning,
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// on binds the pod to node.
func on(node string) podOpt { return func(p *Pod) { bind(p, node) } }

func running(node string) podOpt {
	return func(p *Pod) { bind(p, node); p.State = PodRunning }
}

func bind(p *Pod, node string) { p.NodeName, p.Unschedulable, p.Aim = node, false, nil }

func state(s PodState) podOpt { return func(p *Pod) { p.State = s } }

func started(t time.Time) podOpt { return func(p *Pod) { p.Started = t } }

func reason(r, msg string) podOpt { return func(p *Pod) { p.Reason = r; p.Message = msg } }

func container(c Container) podOpt {
	return func(p *Pod) { p.Containers = append(p.Containers, c) }
}

func node(name, pool string, ready bool) *Node {
	return &Node{Name: name, Pool: pool, Labels: map[string]string{qsv1alpha1.LabelPool: pool}, Ready: ready, Schedulable: true}
}

func cordoned(n *Node) *Node { n.Schedulable = false; return n }
