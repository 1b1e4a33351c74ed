// Package warmpolicy ships in the composition function and the capacity
// provider, as a pure core: how many executor slots a pool keeps warm
// under its warm policy. It imports no client and takes no context; the
// clock is an argument, and nothing it returns depends on anything else.
//
//   - Static (the default): the warm level is minExecutors, as in e6data's
//     Pool reference.
//   - Scheduled: windows (Compile, Schedule.At) raise the level while they
//     are open, from a lead before they open.
//   - Learned: the provider keeps each pool's demand by time of week
//     (History.Observe, kept in the PoolCapacity status by Encode and
//     Decode) and publishes a level (History.Recommend) that the function
//     applies.
//
// Decide combines the policy's level with minExecutors, maxExecutors and
// the tenancy cap; the function holds the level less the executors
// running as warm slots.
//
// # The demand history
//
// A History holds, for each 15-minute slot of the week (Monday 00:00 UTC
// on) and each of the last four weeks, the peak executors wanted, the
// executors started and the share of them that started cold. Figures are
// rounded to 18 bits a slot (exact up to 63 executors and 31 starts,
// within 1/16 above; a peak rounds up), the open slot's exact figures are
// kept beside them, and slots not observed (the provider down) are marked
// so, apart from quiet ones. The cold starts are kept for reading the
// history; the learned level does not use them. The encoded form is at
// most MaxEncodedBytes; in memory a History is about 8 KiB.
//
// # The learned level
//
// The aim is the least warm slot-hours that start WarmShare of the
// executors on an existing node.
//
// The model: a start is warm when the executors wanted at that moment are
// within the warm level. The history keeps each slot's peak, not the
// moment of each start, so of a week's S starts in a slot whose peak was
// P, a level w is taken to start S·min(1, w/P) warm: starts spread evenly
// over the executors wanted, up to the peak. The warm starts a slot's
// level buys are then concave in the level, and the least slot-hours for
// a share of the week's starts are found greedily: levels are raised
// where one more warm slot buys the most warm starts, across all the
// slots of the week, until the share is met (the last step rounds up to
// a whole executor), never above the caps.
//
// The estimate of a slot: its own weeks' figures, and those of the slots
// within an hour of it, weighed by a triangular kernel and by how alike
// their mean starts are beyond chance (a bilateral smoothing; chance is
// the variance of a mean of a few weeks, at least that of a Poisson
// count). Bursts that land at random within the hour are spread over it;
// a job that starts at the same time every week keeps its slot, and the
// quiet slots beside it stay quiet.
//
// The target is for weeks to come, not for the weeks learned from: a plan
// fitted to its own weeks starts more of them warm than it will of the
// next. So each week of history is left out in turn, the other weeks are
// planned for a share, and the share of the left-out weeks' starts such
// plans start warm is measured; the plan is made for the least share
// whose left-out weeks meet WarmShare (ExpectedShare is that measure).
// With one week there is nothing to check a plan on, and it is planned
// for WarmShare itself.
//
// Recommend returns the largest level of the slots [t, t+Lead] touches,
// so the level rises Lead ahead of a slot's demand, and holds until t or
// t+Lead enters another slot.
//
// Assumptions and limits: the week repeats (by time of week in UTC, so
// local business hours move by an hour across a change of daylight saving
// time until the history has seen the new offset); four weeks at most,
// each counting the same; the pool's own nodes left empty (consolidation)
// and room on nodes of earlier bursts, which start executors warm beside
// the warm level, are not credited, so the level errs high; starts are
// counted where the provider sees them, not where they were asked for.
package warmpolicy
