package capacity

import (
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// Container and pod reasons the diagnosis reads.
const (
	reasonOOMKilled        = "OOMKilled"
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
	reasonInvalidImageName = "InvalidImageName"
	reasonEvicted          = "Evicted"
	reasonNodeLost         = "NodeLost"
)

// exitOOM is the exit code of a container killed by the kernel's OOM killer
// (128 + SIGKILL) when the runtime does not say OOMKilled.
const exitOOM = 137

// IsImagePullError reports whether a container waiting reason means its
// image cannot be pulled.
func IsImagePullError(reason string) bool {
	switch reason {
	case reasonErrImagePull, reasonImagePullBackOff, reasonInvalidImageName:
		return true
	}
	return false
}

// A Diagnosis says why a pod failed.
type Diagnosis struct {
	Reason   v1alpha1.FailureReason
	ExitCode int32
	Message  string
	// At is when the failure happened, when the pod's status says so.
	At time.Time
}

// Diagnose tells why an executor pod failed, or returns false when it has
// not. nodeLost says the pod's node has been deleted from under it. Checks
// run from the most specific cause to the most general: a lost node, an
// eviction, an OOM kill, an image that cannot be pulled, then any failed
// container or pod.
func Diagnose(p *Pod, nodeLost bool) (Diagnosis, bool) {
	if p.Reason == reasonNodeLost || (nodeLost && p.State != PodSucceeded && p.State != PodFailed) {
		return Diagnosis{Reason: v1alpha1.FailureNodeLost, Message: nodeLostMessage(p)}, true
	}
	if p.Reason == reasonEvicted {
		return Diagnosis{Reason: v1alpha1.FailureEvicted, Message: p.Message}, true
	}
	for _, c := range p.Containers {
		for _, t := range []*Termination{c.Terminated, c.LastTerminated} {
			if t != nil && (t.Reason == reasonOOMKilled || (t.ExitCode == exitOOM && t.Reason != "Completed")) {
				return Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: t.ExitCode, Message: orDefault(t.Message, "container "+c.Name+" was killed for exceeding its memory limit"), At: t.FinishedAt}, true
			}
		}
	}
	for _, c := range p.Containers {
		if IsImagePullError(c.WaitingReason) {
			return Diagnosis{Reason: v1alpha1.FailureImagePullError, Message: orDefault(c.WaitingMessage, c.WaitingReason+" "+c.Image)}, true
		}
	}
	for _, c := range p.Containers {
		if t := c.Terminated; t != nil && t.ExitCode != 0 {
			return Diagnosis{Reason: v1alpha1.FailureError, ExitCode: t.ExitCode, Message: orDefault(t.Message, "container "+c.Name+" exited with "+t.Reason), At: t.FinishedAt}, true
		}
	}
	if p.State == PodFailed {
		return Diagnosis{Reason: v1alpha1.FailureError, Message: orDefault(p.Message, p.Reason)}, true
	}
	return Diagnosis{}, false
}

func nodeLostMessage(p *Pod) string {
	if p.Message != "" {
		return p.Message
	}
	return "node " + p.NodeName + " is gone"
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
