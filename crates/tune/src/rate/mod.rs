//! `tune --find-rate`: the highest open-loop rate the service holds within
//! the SLO, sustained. One request at a time first (the service's own
//! latency: the hold and the first rate follow from it), then rates held
//! in turn (next.rs), each judged within the SLO and sustained
//! (judge.rs), every failure waited out before the next, the answer
//! repeated at a longer hold, and read again from the points
//! (answer.rs). The world behind the same `Measure` and `Clock` as the
//! pool search, so it runs on simulated queues in tests.
mod answer;
mod judge;
mod next;
mod searcher;

pub use answer::{conclude, slo_words};
pub use judge::{judge, trend, Trend, DEFAULT_ERROR_RATE, GROWTH_SHARE};
pub use next::{bounds, held, next, tally, Bounds, Next, CONFIRM_REPS, LEAST_RATE, WIDTH};
pub use searcher::{default_hold, in_flight_cap, RateSearcher, RateSetup};
