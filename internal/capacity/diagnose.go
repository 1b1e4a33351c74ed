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

// Waiting reasons of containers that cannot start.
const (
	reasonCrashLoopBackOff           = "CrashLoopBackOff"
	reasonCreateContainerConfigError = "CreateContainerConfigError"
	reasonCreateContainerError       = "CreateContainerError"
	reasonRunContainerError          = "RunContainerError"
)

// exitSIGKILL is the exit code of a container killed with SIGKILL (128 + 9):
// by the OOM killer only when the runtime says OOMKilled, else by a failed
// liveness probe or an expired grace period.
const exitSIGKILL = 137

// IsImagePullError reports whether a container waiting reason means its
// image cannot be pulled.
func IsImagePullError(reason string) bool {
	switch reason {
	case reasonErrImagePull, reasonImagePullBackOff, reasonInvalidImageName:
		return true
	}
	return false
}

func isConfigError(reason string) bool {
	switch reason {
	case reasonCreateContainerConfigError, reasonCreateContainerError, reasonRunContainerError:
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
// eviction by the kubelet, a disruption (drain, preemption, taint manager),
// an OOM kill, an image that cannot be pulled, a container that cannot be
// created, a crash loop, then any failed container or pod. A terminating
// pod is diagnosed only by what happened before its deletion: containers
// that exit because the pod is deleted did not fail.
func Diagnose(p *Pod, nodeLost bool) (Diagnosis, bool) {
	if p.Reason == reasonNodeLost || (nodeLost && p.State != PodSucceeded && p.State != PodFailed) {
		return Diagnosis{Reason: v1alpha1.FailureNodeLost, Message: nodeLostMessage(p)}, true
	}
	if p.Reason == reasonEvicted {
		return Diagnosis{Reason: v1alpha1.FailureEvicted, Message: p.Message}, true
	}
	if d := p.Disruption; d != nil {
		return Diagnosis{Reason: v1alpha1.FailureDisrupted, Message: joinNonEmpty(d.Reason, d.Message), At: d.At}, true
	}
	beforeDeletion := func(t *Termination) bool {
		return t != nil && (p.DeletedAt.IsZero() || t.FinishedAt.IsZero() || t.FinishedAt.Before(p.DeletedAt))
	}
	for _, c := range p.Containers {
		for _, t := range []*Termination{c.Terminated, c.LastTerminated} {
			if beforeDeletion(t) && t.Reason == reasonOOMKilled {
				return Diagnosis{Reason: v1alpha1.FailureOOMKilled, ExitCode: t.ExitCode, Message: orDefault(t.Message, "container "+c.Name+" was killed for exceeding its memory limit"), At: t.FinishedAt}, true
			}
		}
	}
	for _, c := range p.Containers {
		switch {
		case IsImagePullError(c.WaitingReason):
			return Diagnosis{Reason: v1alpha1.FailureImagePullError, Message: orDefault(c.WaitingMessage, c.WaitingReason+" "+c.Image)}, true
		case isConfigError(c.WaitingReason):
			return Diagnosis{Reason: v1alpha1.FailureContainerConfigError, Message: orDefault(c.WaitingMessage, c.WaitingReason)}, true
		case c.WaitingReason == reasonCrashLoopBackOff:
			d := Diagnosis{Reason: v1alpha1.FailureCrashLoopBackOff, Message: orDefault(c.WaitingMessage, "container "+c.Name+" keeps exiting")}
			if t := c.LastTerminated; t != nil {
				d.ExitCode, d.At = t.ExitCode, t.FinishedAt
				d.Message = orDefault(t.Message, d.Message)
			}
			return d, true
		}
	}
	for _, c := range p.Containers {
		if t := c.Terminated; beforeDeletion(t) && t.ExitCode != 0 {
			return Diagnosis{Reason: v1alpha1.FailureError, ExitCode: t.ExitCode, Message: orDefault(t.Message, exitMessage(c.Name, t)), At: t.FinishedAt}, true
		}
	}
	if p.State == PodFailed {
		return Diagnosis{Reason: v1alpha1.FailureError, Message: orDefault(p.Message, p.Reason)}, true
	}
	return Diagnosis{}, false
}

func exitMessage(container string, t *Termination) string {
	if t.ExitCode == exitSIGKILL {
		return "container " + container + " was killed (SIGKILL)"
	}
	return "container " + container + " exited with " + t.Reason
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
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
