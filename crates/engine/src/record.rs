//! Recording into HDR histograms (one recorder per load thread, see
//! `thread_recorders`), merged once per cell.
use crate::counts::{bucket, Counts};
use crate::intervals::Intervals;
use hdrhistogram::Histogram;
use poolbench_model::new_histogram;
use poolbench_targets::{ErrorKind, RequestError, SqlState};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A failed exchange as it is counted: its kind, protocol status code or
/// SQLSTATE, and (with a code) what the server said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) kind: ErrorKind,
    pub(crate) code: Option<u16>,
    pub(crate) sqlstate: Option<SqlState>,
    pub(crate) message: Option<Box<str>>,
}

impl From<ErrorKind> for Fault {
    fn from(kind: ErrorKind) -> Self {
        Fault {
            kind,
            code: None,
            sqlstate: None,
            message: None,
        }
    }
}

impl From<RequestError> for Fault {
    fn from(e: RequestError) -> Self {
        let coded = e.code.is_some() || e.sqlstate.is_some();
        Fault {
            kind: e.kind,
            code: e.code,
            sqlstate: e.sqlstate,
            message: coded.then(|| e.message.into_boxed_str()),
        }
    }
}

/// The key a code is counted under (`errors.by_status`).
fn code_key(fault: &Fault) -> Option<String> {
    match (fault.sqlstate, fault.code) {
        (Some(s), _) => Some(s.to_string()),
        (None, Some(c)) => Some(c.to_string()),
        (None, None) => None,
    }
}

impl Timing {
    /// From (checkout, connect, request, first byte, behind, bytes).
    pub(crate) fn of(
        (checkout, connect, request, first_byte, behind, bytes): (
            Duration,
            Option<Duration>,
            Duration,
            Option<Duration>,
            Option<Duration>,
            u64,
        ),
    ) -> Timing {
        Timing {
            checkout,
            connect,
            request,
            first_byte,
            behind,
            bytes,
        }
    }

    /// Checkout wait, connect and request: what the caller waited.
    pub(crate) fn total(&self) -> Duration {
        self.checkout + self.connect.unwrap_or_default() + self.request
    }
}

/// What one worker saw.
pub(crate) struct Recorder {
    pub(crate) latency: Histogram<u64>,
    pub(crate) checkout: Histogram<u64>,
    pub(crate) request: Histogram<u64>,
    /// The request split where the protocol tells: sent to first byte of
    /// the answer, and first byte to last.
    pub(crate) first_byte: Histogram<u64>,
    pub(crate) last_byte: Histogram<u64>,
    /// Pipelining: each request's wait behind the answer before it.
    pub(crate) behind: Histogram<u64>,
    pub(crate) ok: u64,
    pub(crate) errors: [u64; ErrorKind::ALL.len()],
    /// Errors by protocol status code or SQLSTATE, where the protocol gave
    /// one.
    pub(crate) codes: BTreeMap<String, u64>,
    /// The first message of each code.
    pub(crate) messages: BTreeMap<String, Box<str>>,
    pub(crate) connect: Histogram<u64>,
    pub(crate) warmup: u64,
    pub(crate) outside: u64,
    pub(crate) bytes: u64,
    pub(crate) last_done: Option<Instant>,
    /// When the last connect of a successful warm-up request ended.
    pub(crate) warmup_opened: Option<Instant>,
    /// Open loop: sent more than a millisecond after the intended time.
    pub(crate) late: u64,
    /// Open loop: not sent, the intended time being a timeout in the past.
    pub(crate) dropped: u64,
    /// Open loop: how long after its intended time each measured request
    /// was sent (the pacer's own error).
    pub(crate) send_lag: Histogram<u64>,
    pub(crate) counts: Counts,
    /// Latency per second of the measured window, when asked for.
    pub(crate) intervals: Option<Intervals>,
    /// Successes not yet in the histograms (at most [`BATCH`]).
    pending: Vec<Phases>,
}

/// A success's times in nanoseconds ([`NONE`]: not measured). Six
/// histograms recorded per request touch six far-apart counters, whose
/// cache lines the kernel's network path evicts between requests; a
/// success goes into a short buffer instead, and [`BATCH`] of them into
/// the histograms at once, where their counters stay warm.
#[derive(Clone, Copy, Debug)]
struct Phases {
    latency: u64,
    checkout: u64,
    connect: u64,
    request: u64,
    first_byte: u64,
    behind: u64,
}

const NONE: u64 = u64::MAX;

/// Successes buffered before they go into the histograms.
const BATCH: usize = 64;

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(NONE - 1)
}

impl Phases {
    fn of(t: &Timing, latency: Duration) -> Phases {
        Phases {
            latency: nanos(latency),
            checkout: nanos(t.checkout),
            connect: t.connect.map_or(NONE, nanos),
            request: nanos(t.request),
            first_byte: t.first_byte.map_or(NONE, nanos),
            behind: t.behind.map_or(NONE, nanos),
        }
    }
}

/// One exchange's timings: checkout wait, connect (if the checkout opened
/// the connection), request and, where the protocol tells, the part of it
/// until the answer's first byte; body bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub(crate) checkout: Duration,
    pub(crate) connect: Option<Duration>,
    pub(crate) request: Duration,
    pub(crate) first_byte: Option<Duration>,
    /// Of the request, the time it waited behind an earlier answer on its
    /// connection (pipelining).
    pub(crate) behind: Option<Duration>,
    pub(crate) bytes: u64,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Recorder {
            latency: new_histogram(),
            checkout: new_histogram(),
            request: new_histogram(),
            first_byte: new_histogram(),
            last_byte: new_histogram(),
            behind: new_histogram(),
            ok: 0,
            errors: [0; ErrorKind::ALL.len()],
            codes: BTreeMap::new(),
            messages: BTreeMap::new(),
            connect: new_histogram(),
            warmup: 0,
            outside: 0,
            bytes: 0,
            last_done: None,
            warmup_opened: None,
            late: 0,
            dropped: 0,
            send_lag: new_histogram(),
            counts: Counts::default(),
            intervals: None,
            pending: Vec::with_capacity(BATCH),
        }
    }

    /// A recorder that also keeps latency per second (`--hdr-log`), its
    /// timeline with room for `buckets`.
    pub(crate) fn with_intervals(intervals: bool, buckets: usize) -> Self {
        Recorder {
            intervals: intervals.then(Intervals::new),
            counts: Counts::with_capacity(buckets),
            ..Recorder::new()
        }
    }

    /// Put a completion on the timeline (measured or not).
    pub(crate) fn timeline(&mut self, origin: Instant, start: Instant, done: Instant, ok: bool) {
        self.counts
            .record(bucket(origin, start), bucket(origin, done), ok);
    }

    /// A measured success; `latency` is checkout plus request in a closed
    /// loop, and from the intended send time in an open loop. Its times
    /// reach the histograms within [`BATCH`] successes, or when merged.
    pub(crate) fn success(&mut self, t: Timing, latency: Duration) {
        self.pending.push(Phases::of(&t, latency));
        if self.pending.len() >= BATCH {
            self.flush();
        }
        self.ok += 1;
        self.bytes += t.bytes;
    }

    /// The buffered successes into the histograms.
    fn flush(&mut self) {
        for i in 0..self.pending.len() {
            let p = self.pending[i];
            self.put(p);
        }
        self.pending.clear();
    }

    fn put(&mut self, p: Phases) {
        // Auto-resizing: recording only fails past u64 range.
        let _ = self.checkout.record(p.checkout);
        if p.connect != NONE {
            let _ = self.connect.record(p.connect);
        }
        let _ = self.request.record(p.request);
        if p.first_byte != NONE {
            let _ = self.first_byte.record(p.first_byte);
            let _ = self
                .last_byte
                .record(p.request.saturating_sub(p.first_byte));
        }
        if p.behind != NONE {
            let _ = self.behind.record(p.behind);
        }
        let _ = self.latency.record(p.latency);
    }

    /// The latency and checkout wait of the successes not yet in the
    /// histograms (a live view's reading adds them).
    pub(crate) fn pending_latency_and_checkout(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pending.iter().map(|p| (p.latency, p.checkout))
    }

    pub(crate) fn error(&mut self, fault: Fault) {
        self.errors[fault.kind as usize] += 1;
        if let Some(key) = code_key(&fault) {
            if let Some(m) = fault.message {
                self.messages.entry(key.clone()).or_insert(m);
            }
            *self.codes.entry(key).or_default() += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: &Recorder) {
        for p in &other.pending {
            self.put(*p);
        }
        // Auto-resizing histograms of the same precision always merge.
        let _ = self.latency.add(&other.latency);
        let _ = self.checkout.add(&other.checkout);
        let _ = self.request.add(&other.request);
        let _ = self.first_byte.add(&other.first_byte);
        let _ = self.last_byte.add(&other.last_byte);
        let _ = self.behind.add(&other.behind);
        self.ok += other.ok;
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        for (code, n) in &other.codes {
            *self.codes.entry(code.clone()).or_default() += n;
        }
        for (code, m) in &other.messages {
            self.messages
                .entry(code.clone())
                .or_insert_with(|| m.clone());
        }
        let _ = self.connect.add(&other.connect);
        self.warmup += other.warmup;
        self.outside += other.outside;
        self.bytes += other.bytes;
        self.last_done = self.last_done.max(other.last_done);
        self.warmup_opened = self.warmup_opened.max(other.warmup_opened);
        self.late += other.late;
        self.dropped += other.dropped;
        let _ = self.send_lag.add(&other.send_lag);
        self.counts.merge(&other.counts);
        if let Some(o) = &other.intervals {
            self.intervals.get_or_insert_with(Intervals::new).merge(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    /// Successes wait in the buffer until it fills; a merge takes the ones
    /// still waiting, so the merged histograms count every success once.
    #[test]
    fn buffered_successes_all_reach_the_merged_histograms() {
        let mut r = Recorder::new();
        let t = Timing::of((US, None, 5 * US, Some(2 * US), None, 10));
        let n = 3 * BATCH + 5;
        for _ in 0..n {
            r.success(t, 6 * US);
        }
        assert_eq!(r.latency.len(), 3 * BATCH as u64, "full batches recorded");
        assert_eq!(r.pending_latency_and_checkout().count(), 5);
        let mut merged = Recorder::new();
        merged.merge(&r);
        merged.merge(&r);
        let n = 2 * n as u64;
        assert_eq!(merged.ok, n);
        for h in [&merged.latency, &merged.checkout, &merged.request] {
            assert_eq!(h.len(), n);
        }
        assert_eq!(merged.first_byte.len(), n);
        assert_eq!(merged.connect.len() + merged.behind.len(), 0);
        // The answer's first to last byte: the request less its first byte.
        let last = merged.last_byte.value_at_quantile(0.5);
        assert!(merged.last_byte.equivalent(last, 3_000), "{last}");
        assert!(merged.latency.equivalent(merged.latency.max(), 6_000));
    }
}
