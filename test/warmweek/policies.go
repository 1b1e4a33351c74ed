package warmweek

import (
	"fmt"
	"time"

	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// Static holds minExecutors warm, day and night: warmpolicy.Decide under
// the Static policy.
type Static struct {
	Label        string
	MinExecutors int32
	MaxExecutors int32
}

// Name is the policy's label.
func (p *Static) Name() string { return p.Label }

// Observe ignores demand.
func (p *Static) Observe(time.Time, int32, int32, int32) {}

// Level is minExecutors, never changing.
func (p *Static) Level(time.Time) (int32, time.Time) {
	l := warmpolicy.Decide(warmpolicy.LevelInput{Policy: warmpolicy.Static, MinExecutors: p.MinExecutors, MaxExecutors: p.MaxExecutors})
	return l.Executors, time.Time{}
}

// Scheduled raises the level in windows: warmpolicy.Schedule.At with the
// lead, then Decide.
type Scheduled struct {
	MinExecutors int32
	MaxExecutors int32
	Lead         time.Duration
	Schedule     warmpolicy.Schedule
}

// NewScheduled compiles windows.
func NewScheduled(ws []warmpolicy.Window, minExec, maxExec int32, lead time.Duration) (*Scheduled, error) {
	s, err := warmpolicy.Compile(ws)
	if err != nil {
		return nil, fmt.Errorf("cannot compile the windows: %w", err)
	}
	return &Scheduled{MinExecutors: minExec, MaxExecutors: maxExec, Lead: lead, Schedule: s}, nil
}

// Name is "scheduled".
func (p *Scheduled) Name() string { return "scheduled" }

// Observe ignores demand.
func (p *Scheduled) Observe(time.Time, int32, int32, int32) {}

// Level is the largest window open within the lead.
func (p *Scheduled) Level(now time.Time) (int32, time.Time) {
	level, window, next := p.Schedule.At(now, p.Lead)
	l := warmpolicy.Decide(warmpolicy.LevelInput{
		Policy: warmpolicy.Scheduled, MinExecutors: p.MinExecutors, MaxExecutors: p.MaxExecutors,
		Scheduled: level, Window: window,
	})
	return l.Executors, next
}

// Learned is the provider's learned level: it observes the pool into a
// History, publishes History.Recommend when the last one's Until has
// passed, and the function applies it through Decide. Once a day it
// encodes and decodes the history, as a provider that restarts reads it
// back from the PoolCapacity status.
type Learned struct {
	MinExecutors int32
	MaxExecutors int32
	Goal         warmpolicy.Goal

	history   *warmpolicy.History
	rec       *warmpolicy.Recommendation
	persisted time.Time
	// Recommendations counts the recommendations published.
	Recommendations int
}

// Name is "learned".
func (p *Learned) Name() string { return "learned" }

// Observe records demand in the history.
func (p *Learned) Observe(now time.Time, wanted, starts, cold int32) {
	if p.history == nil {
		p.history, p.persisted = &warmpolicy.History{}, now
	}
	p.history.Observe(now, wanted, starts, cold)
	if now.Sub(p.persisted) >= 24*time.Hour {
		h, err := warmpolicy.Decode(p.history.Encode())
		if err != nil {
			panic(fmt.Sprintf("the history does not survive its encoding: %v", err)) // a bug in warmpolicy
		}
		p.history, p.persisted = h, now
	}
}

// Level is the published recommendation, through Decide.
func (p *Learned) Level(now time.Time) (int32, time.Time) {
	if p.rec == nil || !now.Before(p.rec.Until) {
		r := p.history.Recommend(now, p.Goal)
		p.rec = &r
		p.Recommendations++
	}
	l := warmpolicy.Decide(warmpolicy.LevelInput{
		Policy: warmpolicy.Learned, MinExecutors: p.MinExecutors, MaxExecutors: p.MaxExecutors, Learned: p.rec,
	})
	return l.Executors, p.rec.Until
}
