//! JUnit XML for CI systems: each check a test case, a failure carrying
//! what was measured. Suites are built here from a run's SLO bounds or a
//! comparison's `--fail-if` bounds; a scenario's expectations arrive as
//! [`JunitSuite`]s from the caller.
use crate::bounds::Bound;
use crate::compare::{bound_checks, Comparison};
use crate::figures::{figure_checks, FigureComparison};
use junit_report::{
    Duration as JDuration, OffsetDateTime, ReportBuilder, TestCase, TestSuiteBuilder,
};
use poolbench_model::{CellResult, RunResult};
use std::time::{SystemTime, UNIX_EPOCH};

/// One check: passed, or failed with a message.
#[derive(Clone, Debug, PartialEq)]
pub struct JunitCase {
    /// Where the check belongs (a cell, a step): the test's class.
    pub class: String,
    /// What was checked: `p99 < 50.0 ms`.
    pub name: String,
    /// What was measured, also for a passed check.
    pub measured: String,
    /// `None`: met; `Some(message)`: failed, saying what was measured.
    pub failure: Option<String>,
    pub seconds: f64,
}

/// A group of checks (one run, one comparison, one scenario step).
#[derive(Clone, Debug, PartialEq)]
pub struct JunitSuite {
    pub name: String,
    /// When what was checked ran.
    pub started: SystemTime,
    pub cases: Vec<JunitCase>,
}

/// A result's `started_at` (RFC 3339) as a time; the epoch if unreadable.
pub fn started(rfc3339: &str) -> SystemTime {
    humantime::parse_rfc3339_weak(rfc3339).unwrap_or(UNIX_EPOCH)
}

/// The suites as one JUnit XML document (`<testsuites>`).
pub fn render_junit(suites: &[JunitSuite]) -> String {
    let mut report = ReportBuilder::new();
    for s in suites {
        let mut suite = TestSuiteBuilder::new(&s.name);
        let since = s.started.duration_since(UNIX_EPOCH).unwrap_or_default();
        let at = OffsetDateTime::from_unix_timestamp(since.as_secs() as i64)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        suite.set_timestamp(at);
        for c in &s.cases {
            let time = JDuration::seconds_f64(c.seconds.max(0.0));
            let mut case = match &c.failure {
                None => TestCase::success(&c.name, time),
                Some(message) => TestCase::failure(&c.name, time, "poolbench", message),
            };
            case.set_classname(&c.class);
            case.set_system_out(&c.measured);
            suite.add_testcase(case);
        }
        report.add_testsuite(suite.build());
    }
    let mut out = Vec::new();
    report
        .build()
        .write_xml(&mut out)
        .expect("writing XML to memory does not fail");
    String::from_utf8(out).expect("the XML writer writes UTF-8") + "\n"
}

/// A run's verdict: one case per SLO bound per cell; without `--slo`, one
/// per cell that fails when the cell answered no request.
pub fn run_junit(r: &RunResult) -> Vec<JunitSuite> {
    let cases = r.cells.iter().flat_map(|c| cell_cases(r, c)).collect();
    // The built-in server's port changes from run to run; a suite's name
    // should not.
    let target = match r.target.starts_with("built-in server") {
        true => "the built-in server",
        false => r.target.as_str(),
    };
    vec![JunitSuite {
        name: format!("poolbench run {target}"),
        started: started(&r.started_at),
        cases,
    }]
}

fn cell_cases(r: &RunResult, c: &CellResult) -> Vec<JunitCase> {
    let class = c.label();
    let seconds = c.duration_s;
    match &r.config.slo {
        Some(slo) => slo
            .checks(c)
            .into_iter()
            .map(|x| JunitCase {
                class: class.clone(),
                name: format!("SLO {}", x.bound),
                failure: (!x.met).then(|| format!("{} breaks the SLO", x.line)),
                measured: x.measured,
                seconds,
            })
            .collect(),
        None => vec![JunitCase {
            class,
            name: "answered requests".to_string(),
            measured: format!(
                "{:.0} req/s, p99 {:.1} ms, {} of {} requests failed",
                c.throughput_rps,
                c.latency_us.p99 / 1000.0,
                c.errors.total,
                c.requests
            ),
            failure: (c.requests == c.errors.total)
                .then(|| format!("no request succeeded ({} failed)", c.errors.total)),
            seconds,
        }],
    }
}

/// A comparison's verdict: one case per `--fail-if` bound per matched
/// cell; without bounds, one passing case per cell with its changes.
pub fn comparison_junit(c: &Comparison, bounds: &[Bound], at: SystemTime) -> Vec<JunitSuite> {
    let name = format!("poolbench compare {} {}", c.base, c.new);
    let class = |cell: &str| format!("compare {cell}");
    let cases = match bounds.is_empty() {
        false => bound_checks(c, bounds)
            .into_iter()
            .map(|x| JunitCase {
                class: class(&x.cell),
                name: format!("fail-if {}", x.bound),
                failure: x.crossed.then(|| format!("crossed: {}", x.line)),
                measured: x.measured,
                seconds: 0.0,
            })
            .collect(),
        true => c
            .cells
            .iter()
            .map(|x| {
                let cell = poolbench_model::cell_label(&x.strategy, x.concurrency);
                JunitCase {
                    class: class(&cell),
                    name: "compared".to_string(),
                    measured: format!(
                        "throughput {:+.1}%, p99 {:+.1}%, errors {:+.2} pp",
                        x.throughput_pct, x.p99_pct, x.error_rate_pp
                    ),
                    failure: None,
                    seconds: 0.0,
                }
            })
            .collect(),
    };
    vec![JunitSuite {
        name,
        started: at,
        cases,
    }]
}

/// A comparison of figures' verdict: one case per `--fail-if` bound
/// (failed when a significant change crossed it); without bounds, one
/// passing case per figure with its change.
pub fn figures_junit(c: &FigureComparison, bounds: &[Bound], at: SystemTime) -> Vec<JunitSuite> {
    let class = format!("compare {}", c.kind);
    let cases = match bounds.is_empty() {
        false => figure_checks(c, bounds)
            .into_iter()
            .map(|x| JunitCase {
                class: class.clone(),
                name: format!("fail-if {}", x.bound),
                failure: x.crossed.then(|| format!("crossed: {}", x.line)),
                measured: x.measured,
                seconds: 0.0,
            })
            .collect(),
        true => c
            .figures
            .iter()
            .map(|f| JunitCase {
                class: class.clone(),
                name: format!("compared {}", f.name),
                measured: format!(
                    "{} {}: {} ({})",
                    f.title,
                    f.values(),
                    f.change_text(),
                    f.verdict()
                ),
                failure: None,
                seconds: 0.0,
            })
            .collect(),
    };
    vec![JunitSuite {
        name: format!("poolbench compare {} {}", c.base, c.new),
        started: at,
        cases,
    }]
}
