package capacity

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

func TestDiagnose(t *testing.T) {
	type want struct {
		d      Diagnosis
		failed bool
	}
	cases := map[string]struct {
		reason   string
		pod      *Pod
		nodeLost bool
		want     want
	}{
		"Healthy": {
			reason: "A running pod with running containers has not failed.",
			pod:    executor("a", "e", "p", "qs", running("n"), container(Container{Name: "executor"})),
		},
		"Completed": {
			reason: "A container that exited 0 is no failure.",
			pod:    executor("a", "e", "p", "qs", state(PodSucceeded), container(Container{Name: "executor", Terminated: &Termination{Reason: "Completed"}})),
		},
		"NodeLostByReason": {
			reason: "The pod status reason NodeLost wins over anything else.",
			pod:    executor("a", "e", "p", "qs", running("n"), reason("NodeLost", "node n went away")),
			want:   want{Diagnosis{Reason: v1alpha1.FailureNodeLost, Message: "node n went away"}, true},
		},
		"NodeLostByDeletedNode": {
			reason:   "A running pod on a node that was deleted lost its node.",
			pod:      executor("a", "e", "p", "qs", running("n")),
			nodeLost: true,
			want:     want{Diagnosis{Reason: v1alpha1.FailureNodeLost, Message: "node n is gone"}, true},
		},
		"FinishedPodOnDeletedNode": {
			reason:   "A pod that finished before its node went is not NodeLost.",
			pod:      executor("a", "e", "p", "qs", running("n"), state(PodSucceeded)),
			nodeLost: true,
		},
		"Evicted": {
			reason: "The pod status reason Evicted.",
			pod:    executor("a", "e", "p", "qs", state(PodFailed), reason("Evicted", "low on memory")),
			want:   want{Diagnosis{Reason: v1alpha1.FailureEvicted, Message: "low on memory"}, true},
		},
		"SIGKILLIsNotOOM": {
			reason: "Exit code 137 with reason Error is a SIGKILL (a failed liveness probe, an expired grace period), not an OOM kill: only the runtime's OOMKilled says that.",
			pod: executor("a", "e", "p", "qs", state(PodFailed), container(Container{Name: "executor",
				Terminated: &Termination{Reason: "Error", ExitCode: 137, FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureError, ExitCode: 137, Message: "container executor was killed (SIGKILL)", At: t0}, true},
		},
		"OOMKilledBeforeRestart": {
			reason: "A restarted container's last termination counts.",
			pod: executor("a", "e", "p", "qs", running("n"), container(Container{Name: "executor",
				LastTerminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: 137, Message: "container executor was killed for exceeding its memory limit", At: t0}, true},
		},
		"InvalidImageName": {
			reason: "An invalid image name is an image pull error.",
			pod:    executor("a", "e", "p", "qs", on("n"), container(Container{Name: "executor", Image: "x y", WaitingReason: "InvalidImageName"})),
			want:   want{Diagnosis{Reason: v1alpha1.FailureImagePullError, Message: "InvalidImageName x y"}, true},
		},
		"CrashLoop": {
			reason: "A container waiting in CrashLoopBackOff, as the kubelet reports it (state waiting, lastState terminated), is a crash loop with its last exit.",
			pod: executor("a", "e", "p", "qs", running("n"), container(Container{Name: "executor", WaitingReason: "CrashLoopBackOff", WaitingMessage: "back-off 5m0s restarting failed container",
				LastTerminated: &Termination{Reason: "Error", ExitCode: 1, Message: "boom", FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureCrashLoopBackOff, ExitCode: 1, Message: "boom", At: t0}, true},
		},
		"CrashLoopAfterOOM": {
			reason: "A crash loop whose last exit was an OOM kill is OOMKilled: that is the cause to fix.",
			pod: executor("a", "e", "p", "qs", running("n"), container(Container{Name: "executor", WaitingReason: "CrashLoopBackOff",
				LastTerminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: 137, Message: "container executor was killed for exceeding its memory limit", At: t0}, true},
		},
		"CreateContainerConfigError": {
			reason: "A container that cannot be created from its spec (a missing Secret or ConfigMap key) is a config error.",
			pod: executor("a", "e", "p", "qs", on("n"), container(Container{Name: "executor", WaitingReason: "CreateContainerConfigError",
				WaitingMessage: `secret "s3-creds" not found`})),
			want: want{Diagnosis{Reason: v1alpha1.FailureContainerConfigError, Message: `secret "s3-creds" not found`}, true},
		},
		"Disrupted": {
			reason: "A terminating pod with a DisruptionTarget condition was drained, preempted or reclaimed.",
			pod: executor("a", "e", "p", "qs", running("n"), state(PodDeleted), func(p *Pod) {
				p.DeletedAt = t0.Add(time.Minute)
				p.Disruption = &Disruption{Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", At: t0}
			}),
			want: want{Diagnosis{Reason: v1alpha1.FailureDisrupted, Message: "EvictionByEvictionAPI: Eviction API: evicting", At: t0}, true},
		},
		"ScaledDown": {
			reason: "A terminating pod whose container exited because of the deletion did not fail.",
			pod: executor("a", "e", "p", "qs", running("n"), state(PodDeleted), func(p *Pod) { p.DeletedAt = t0 }, container(Container{Name: "executor",
				Terminated: &Termination{Reason: "Error", ExitCode: 143, FinishedAt: t0.Add(time.Second)}})),
		},
		"FailedThenDeleted": {
			reason: "A pod that failed before it was deleted keeps its diagnosis while it terminates.",
			pod: executor("a", "e", "p", "qs", running("n"), state(PodDeleted), func(p *Pod) { p.DeletedAt = t0.Add(time.Minute) }, container(Container{Name: "executor",
				Terminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: 137, Message: "container executor was killed for exceeding its memory limit", At: t0}, true},
		},
		"FailedPodWithoutContainers": {
			reason: "A failed pod without container statuses is an Error with the pod's message.",
			pod:    executor("a", "e", "p", "qs", state(PodFailed), reason("DeadlineExceeded", "")),
			want:   want{Diagnosis{Reason: v1alpha1.FailureError, Message: "DeadlineExceeded"}, true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, failed := Diagnose(tc.pod, tc.nodeLost)
			if diff := cmp.Diff(tc.want, want{d, failed}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
