package warmpolicy

import "fmt"

// Policy names (Pool spec.warmPolicy.type). Static is the default: the warm
// level is minExecutors, the reference's behaviour.
const (
	Static    = "Static"
	Scheduled = "Scheduled"
	Learned   = "Learned"
)

// Sources of a warm level (Level.Source): which policy set it.
const (
	SourceMinExecutors = "MinExecutors"
	SourceWindow       = "Window"
	SourceLearned      = "Learned"
)

// LevelInput is what the warm level of a pool is decided from.
type LevelInput struct {
	// Policy is Static, Scheduled or Learned; empty is Static.
	Policy       string
	MinExecutors int32
	MaxExecutors int32
	// Cap is the tenancy cap on executors (0: none).
	Cap int32
	// Scheduled is Schedule.At's level, and Window the name of the window
	// that set it (Scheduled).
	Scheduled int32
	Window    string
	// Learned is the provider's recommendation (Learned); nil until the
	// provider published one.
	Learned *Recommendation
}

// Level is the warm level of a pool, and why.
type Level struct {
	// Executors is the warm level: warm slots are Executors less the
	// executors running.
	Executors int32
	// Source is SourceMinExecutors, SourceWindow or SourceLearned.
	Source string
	// Reason is one sentence for the Pool status.
	Reason string
}

// Decide is the warm level of a pool under its policy: the larger of
// MinExecutors and the policy's level, then at most MaxExecutors and at
// most Cap. It is pure. An unknown policy counts as Static (the API admits
// only the three).
func Decide(in LevelInput) Level {
	l := Level{Executors: max(0, in.MinExecutors), Source: SourceMinExecutors}
	switch in.Policy {
	case Scheduled:
		switch {
		case in.Window == "":
			l.Reason = fmt.Sprintf("no warm window is open: the warm level is minExecutors (%d)", l.Executors)
		case in.Scheduled <= l.Executors:
			l.Reason = fmt.Sprintf("window %q asks for %d warm executors, no more than minExecutors (%d)", in.Window, in.Scheduled, l.Executors)
		default:
			l.Executors, l.Source = in.Scheduled, SourceWindow
			l.Reason = fmt.Sprintf("window %q is open or opens within the lead: %d warm executors", in.Window, in.Scheduled)
		}
	case Learned:
		switch r := in.Learned; {
		case r == nil:
			l.Reason = fmt.Sprintf("no learned warm level is published yet: the warm level is minExecutors (%d)", l.Executors)
		case r.Executors <= l.Executors:
			l.Reason = fmt.Sprintf("the learned level (%d) is no more than minExecutors (%d): %s", r.Executors, l.Executors, r.Reason)
		default:
			l.Executors, l.Source = r.Executors, SourceLearned
			l.Reason = fmt.Sprintf("learned level %d: %s", r.Executors, r.Reason)
		}
	default:
		l.Reason = fmt.Sprintf("static warm level: minExecutors (%d)", l.Executors)
	}
	if l.Executors > in.MaxExecutors {
		l.Executors = max(0, in.MaxExecutors)
		l.Reason += fmt.Sprintf("; capped at maxExecutors (%d)", l.Executors)
	}
	if in.Cap > 0 && l.Executors > in.Cap {
		l.Executors = in.Cap
		l.Reason += fmt.Sprintf("; capped at the tenancy cap (%d)", in.Cap)
	}
	return l
}
