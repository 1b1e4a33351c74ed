package capacity

import (
	"testing"

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
		"OOMKilledWithoutReason": {
			reason: "Exit code 137 without a runtime reason is an OOM kill.",
			pod: executor("a", "e", "p", "qs", state(PodFailed), container(Container{Name: "executor",
				Terminated: &Termination{Reason: "Error", ExitCode: 137, Message: "killed", FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: 137, Message: "killed", At: t0}, true},
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
			reason: "A container waiting in CrashLoopBackOff after exiting non-zero is an Error.",
			pod: executor("a", "e", "p", "qs", running("n"), container(Container{Name: "executor", WaitingReason: "CrashLoopBackOff",
				Terminated: &Termination{Reason: "Error", ExitCode: 1, Message: "boom", FinishedAt: t0}})),
			want: want{Diagnosis{Reason: v1alpha1.FailureError, ExitCode: 1, Message: "boom", At: t0}, true},
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
