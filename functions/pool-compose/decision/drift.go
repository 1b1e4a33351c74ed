package decision

// Drift windows (karpenter.driftWindows): weekly maintenance windows in
// which Karpenter may replace a pool's drifted nodes.
//
// Karpenter allows a reason the fewest disruptions of all the budgets that
// are active and name it (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/
// nodepool.go, GetAllowedDisruptionsByReason: the minimum over active
// budgets; a scheduled budget is active from each cron hit for its
// duration, Budget.IsActive, in UTC), and a budget that is not active
// allows any number. So a window cannot lift an always-active Drifted: 0
// budget: the NodePool gets, for Drifted, the window's own budget while it
// is open, and a 0 budget for each stretch of the week between windows,
// each a weekly cron at the stretch's start with the stretch's length.
// Underutilized keeps its 0 budget.

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

const (
	minutesPerDay  = 24 * 60
	minutesPerWeek = 7 * minutesPerDay
)

// defaultDriftWindowNodes is a window's nodes when it names none:
// Karpenter's own default budget (karpenter.sh/v1 NodePool
// spec.disruption.budgets[].nodes, 10%).
const defaultDriftWindowNodes = "10%"

// budgetNodes is the pattern of a budget's nodes in the NodePool CRD
// (karpenter.sh_nodepools.yaml, budgets[].nodes).
var budgetNodes = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)

// windowDuration is a window's duration: hours, minutes, or both, as the
// NodePool CRD's budgets[].duration pattern takes them.
var windowDuration = regexp.MustCompile(`^(?:([0-9]+)h)?(?:([0-9]+)m)?$`)

// weekdays are cron's day-of-week names, Sunday first.
var weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// windowStarts are the minutes of the week (from Sunday 00:00 UTC) at which
// a drift window's schedule opens it. Only schedules that open at one
// minute and one hour on some days of the week can be complemented by
// weekly budgets, so others are refused.
func windowStarts(schedule string) ([]int, error) {
	switch strings.TrimSpace(schedule) {
	case "@daily", "@midnight":
		schedule = "0 0 * * *"
	case "@weekly":
		schedule = "0 0 * * 0"
	}
	f := strings.Fields(schedule)
	bad := fmt.Errorf("%q is not a weekly schedule: a drift window opens at one minute and one hour (UTC) on some days of the week, for example \"0 2 * * sun\", \"30 1 * * mon-fri\", \"0 3 * * *\" or @weekly", schedule)
	if len(f) != 5 || (f[2] != "*" && f[2] != "?") || f[3] != "*" {
		return nil, bad
	}
	minute, err1 := strconv.Atoi(f[0])
	hour, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || minute < 0 || minute > 59 || hour < 0 || hour > 23 {
		return nil, bad
	}
	days, err := daysOfWeek(f[4])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bad, err)
	}
	out := make([]int, 0, len(days))
	for _, d := range days {
		out = append(out, d*minutesPerDay+hour*60+minute)
	}
	return out, nil
}

// daysOfWeek reads a cron day-of-week field: *, a day, a list, or ranges,
// by number (0 and 7 are Sunday) or name. The days are sorted, once each.
func daysOfWeek(field string) ([]int, error) {
	if field == "*" || field == "?" {
		return []int{0, 1, 2, 3, 4, 5, 6}, nil
	}
	set := map[int]bool{}
	for _, item := range strings.Split(field, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := weekday(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = weekday(hi); err != nil {
				return nil, err
			}
			if b == 0 && strings.TrimSpace(hi) == "7" {
				b = 7
			}
		}
		if b < a {
			return nil, fmt.Errorf("day range %q runs backwards", item)
		}
		for d := a; d <= b; d++ {
			set[d%7] = true
		}
	}
	out := make([]int, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out, nil
}

// weekday is a cron day of the week by number or name.
func weekday(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := slices.Index(weekdays, s); i >= 0 {
		return i, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 7 {
		return 0, fmt.Errorf("%q is not a day of the week (0-7 or sun-sat)", s)
	}
	return n % 7, nil
}

// windowMinutes is a window's duration in minutes.
func windowMinutes(d string) (int, error) {
	m := windowDuration.FindStringSubmatch(d)
	if d == "" || m == nil {
		return 0, fmt.Errorf("%q is not a duration of hours and minutes such as 4h, 90m or 1h30m", d)
	}
	// Digits or empty, by the pattern: empty is 0.
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	total := h*60 + mi
	if total <= 0 || total >= minutesPerWeek {
		return 0, fmt.Errorf("%q is not between one minute and one week", d)
	}
	return total, nil
}

// minutesString writes minutes as a NodePool budget's duration (4h, 90m
// as 1h30m).
func minutesString(m int) string {
	switch {
	case m%60 == 0:
		return fmt.Sprintf("%dh", m/60)
	case m < 60:
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%dm", m/60, m%60)
}

// ValidateDriftWindows checks the settings' drift windows, by field.
func ValidateDriftWindows(windows []v1beta1.DriftWindow) []SettingError {
	var errs []SettingError
	for i, w := range windows {
		at := fmt.Sprintf("karpenter.driftWindows[%d]", i)
		if _, err := windowStarts(w.Schedule); err != nil {
			errs = append(errs, SettingError{Path: at + ".schedule", Message: err.Error()})
		}
		if _, err := windowMinutes(w.Duration); err != nil {
			errs = append(errs, SettingError{Path: at + ".duration", Message: err.Error()})
		}
		if w.Nodes != "" && !budgetNodes.MatchString(w.Nodes) {
			errs = append(errs, SettingError{Path: at + ".nodes", Message: fmt.Sprintf("%q is not a node count or a percentage such as 1 or 10%%", w.Nodes)})
		}
		for field, globs := range map[string][]string{"namespaces": w.Namespaces, "pools": w.Pools} {
			for j, g := range globs {
				if _, err := path.Match(g, ""); err != nil {
					errs = append(errs, SettingError{Path: fmt.Sprintf("%s.%s[%d]", at, field, j), Message: fmt.Sprintf("%q is not a glob pattern: %v", g, err)})
				}
			}
		}
	}
	slices.SortFunc(errs, func(a, b SettingError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

// windowApplies tells whether a window applies to pool ns/name.
func windowApplies(w v1beta1.DriftWindow, name, ns string) bool {
	return globsMatch(w.Namespaces, ns) && globsMatch(w.Pools, name)
}

// globsMatch tells whether s matches one of globs; no globs match all.
func globsMatch(globs []string, s string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, err := path.Match(g, s); err == nil && ok {
			return true
		}
	}
	return false
}

// driftBudgets are the Drifted budgets of pool ns/name's NodePool: each
// window that applies, open for its duration from each of its starts, and
// a 0 budget for each stretch of the week no window covers. Nil when no
// window applies; windows are validated before (ValidateDriftWindows), and
// one that is not valid is left out.
func driftBudgets(windows []v1beta1.DriftWindow, name, ns string) []objects.DriftBudget {
	var (
		out     []objects.DriftBudget
		covered [minutesPerWeek]bool
	)
	for _, w := range windows {
		starts, err1 := windowStarts(w.Schedule)
		length, err2 := windowMinutes(w.Duration)
		if err1 != nil || err2 != nil || !windowApplies(w, name, ns) {
			continue
		}
		nodes := w.Nodes
		if nodes == "" {
			nodes = defaultDriftWindowNodes
		}
		out = append(out, objects.DriftBudget{Nodes: nodes, Schedule: strings.TrimSpace(w.Schedule), Duration: minutesString(length)})
		for _, s := range starts {
			for m := s; m < s+length; m++ {
				covered[m%minutesPerWeek] = true
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, closedStretches(covered)...)
}

// closedStretches are the 0 budgets of the minutes no window covers: one
// weekly cron per stretch, at its first minute, for its length. A stretch
// that runs past Saturday's end is one stretch with the one that starts
// the week.
func closedStretches(covered [minutesPerWeek]bool) []objects.DriftBudget {
	first := slices.Index(covered[:], true)
	if first < 0 {
		return nil
	}
	type stretch struct {
		at     int
		budget objects.DriftBudget
	}
	var stretches []stretch
	// Walk one week from a covered minute, so no stretch is cut in two.
	for i := 0; i < minutesPerWeek; {
		m := (first + i) % minutesPerWeek
		if covered[m] {
			i++
			continue
		}
		n := 0
		for i+n < minutesPerWeek && !covered[(first+i+n)%minutesPerWeek] {
			n++
		}
		stretches = append(stretches, stretch{at: m, budget: objects.DriftBudget{
			Nodes:    "0",
			Schedule: fmt.Sprintf("%d %d * * %d", m%60, m%minutesPerDay/60, m/minutesPerDay),
			Duration: minutesString(n),
		}})
		i += n
	}
	// In the week's order, from Sunday.
	slices.SortFunc(stretches, func(a, b stretch) int { return a.at - b.at })
	out := make([]objects.DriftBudget, 0, len(stretches))
	for _, s := range stretches {
		out = append(out, s.budget)
	}
	return out
}
