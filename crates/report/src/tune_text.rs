//! `tune`'s text report: the answer first, in words, with how to set it;
//! then the capacity curve (a table and a sparkline, knee and cliff
//! marked), every point, the inferences, the findings, the time spent.
use crate::format::{fmt_duration_us, fmt_rate};
use poolbench_model::{InferenceId, TuneLoad, TunePhase, TunePoint, TuneResult};
use poolbench_tune::capacity_points;
use std::fmt::Write;

/// The answer in one or two sentences: what to set, what the service does.
pub fn tune_answer(r: &TuneResult) -> String {
    let load = match r.load {
        TuneLoad::Concurrency(c) => format!("c={c}"),
        TuneLoad::Rate(x) => format!("{} req/s", fmt_rate(x)),
    };
    let first = match &r.recommendation {
        Some(p) => {
            let figures = format!(
                "{} req/s{}, p99 {} at {load}",
                fmt_rate(p.throughput_rps),
                pct(p.throughput_ci95, p.throughput_rps),
                fmt_duration_us(p.p99_us)
            );
            let ceiling = r
                .inferences
                .iter()
                .find(|i| i.id == InferenceId::ClosedLoopCeiling)
                .map_or(String::new(), |i| format!(" Why no more: {}.", i.text));
            match &p.cap {
                Some(why) => format!(
                    "Cap requests in flight at {n}: set pool size {n} ({}): {figures}; {why}.{ceiling}",
                    p.strategy,
                    n = p.pool_size
                ),
                None => format!(
                    "Set pool size {} ({}): {figures}.{ceiling}",
                    p.pool_size, p.strategy
                ),
            }
        }
        None => format!(
            "No pool size recommended: {}.",
            r.reason.as_deref().unwrap_or("the search found none")
        ),
    };
    format!("{first} {}", service_sentence(r))
        .trim_end()
        .to_string()
}

fn pct(ci: Option<f64>, of: f64) -> String {
    match ci {
        Some(c) if of > 0.0 => format!(" ±{:.0}%", 100.0 * c / of),
        _ => String::new(),
    }
}

/// What the capacity search says about the service, in one sentence.
fn service_sentence(r: &TuneResult) -> String {
    let c = &r.capacity;
    if c.max_rps <= 0.0 {
        return String::new();
    }
    let mut s = match c.still_rising {
        true => format!(
            "The service was not pushed to its limit: {} req/s at {} in flight, still rising",
            fmt_rate(c.max_rps),
            c.max_rps_in_flight
        ),
        false => format!(
            "The service peaks at about {} req/s with {} in flight",
            fmt_rate(c.max_rps),
            c.max_rps_in_flight
        ),
    };
    if let Some(n) = c.serves_at_once {
        let _ = write!(s, " and serves about {n} at a time");
    }
    match (
        c.cliff_in_flight,
        r.inferences.iter().find(|i| i.id == InferenceId::Cliff),
    ) {
        (Some(_), Some(i)) => {
            let _ = write!(s, "; {}", i.text.trim_start_matches("the service "));
        }
        _ => {
            let _ = write!(s, "; no failure up to {} in flight", c.most_in_flight_tried);
        }
    }
    s.push('.');
    s
}

/// The whole report.
pub fn render_tune_text(r: &TuneResult) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "poolbench tune · {}\n", r.target);
    let _ = writeln!(t, "{}\n", tune_answer(r));
    if let Some(p) = &r.recommendation {
        if !p.tied_with.is_empty() {
            let sizes: Vec<String> = p.tied_with.iter().map(|n| n.to_string()).collect();
            let _ = writeln!(
                t,
                "A tie with pool size {} (their intervals overlap): the smaller wins.\n",
                sizes.join(", ")
            );
        }
        t.push_str(&crate::tune_timeouts::block(r));
        let _ = writeln!(t, "How to set it:");
        for s in &p.client_settings {
            let _ = writeln!(t, "  {:<30} {}", s.client, s.setting);
        }
        t.push('\n');
    } else {
        t.push_str(&crate::tune_timeouts::block(r));
    }
    if !r.inferences.is_empty() {
        let _ = writeln!(t, "What the search saw:");
        for i in &r.inferences {
            let _ = writeln!(t, "  - {}: {}", i.text, i.evidence);
        }
        t.push('\n');
    }
    t.push_str(&crate::fleet::fleet_text(r));
    crate::tune_fleet::text(&mut t, r);
    capacity_section(&mut t, r);
    points_section(&mut t, r);
    comparisons_section(&mut t, r);
    if r.families_found.len() > 1 {
        let _ = writeln!(t, "Each family:");
        for f in &r.families_found {
            let what = match (f.pool_size, f.throughput_rps) {
                (Some(n), Some(x)) => format!("{n} connection(s), {} req/s", fmt_rate(x)),
                _ => f.reason.clone().unwrap_or_default(),
            };
            let _ = writeln!(t, "  {:<16} {what}", f.family);
        }
        t.push('\n');
    }
    for f in &r.findings {
        let _ = writeln!(t, "! {}: {}", f.id, f.title);
        for e in &f.evidence {
            let _ = writeln!(t, "    {e}");
        }
    }
    t.push_str(&search_footer(r));
    t
}

/// Why the search stopped early, if it did, and what it spent: one line
/// each.
pub(crate) fn search_footer(r: &TuneResult) -> String {
    let mut t = String::new();
    if let Some(why) = &r.stopped_early {
        let _ = writeln!(t, "The search stopped early: {why}.");
    }
    if let Some(line) = threads_line(r) {
        let _ = writeln!(t, "{line}");
    }
    let _ = writeln!(
        t,
        "Searched {} points in {:.0} s (budget {:.0} s).",
        r.points.len(),
        r.elapsed_s,
        r.budget_s
    );
    t
}

/// The load threads the search chose, and the comparison that chose them.
pub(crate) fn threads_line(r: &TuneResult) -> Option<String> {
    let g = r.generator_threads.as_ref()?;
    let ratio = g.many_rps / g.one_rps.max(1e-9);
    let why = match g.threads {
        1 => "a thread more took cores from the service",
        _ => "one thread held the load back",
    };
    Some(format!(
        "Load threads: {} (at {} in flight, {} threads carried {ratio:.2}x one thread's {} req/s: {why}).",
        g.threads,
        g.in_flight,
        g.many,
        fmt_rate(g.one_rps)
    ))
}

/// The capacity curve: a sparkline of throughput against in flight, then
/// the table with knee and cliff marked.
fn capacity_section(t: &mut String, r: &TuneResult) {
    let levels = capacity_points(&r.points);
    if levels.is_empty() {
        return;
    }
    let c = &r.capacity;
    let _ = writeln!(t, "Capacity (one connection per request in flight):");
    let _ = writeln!(
        t,
        "  throughput {}  (in flight {} … {})",
        sparkline(&levels),
        levels[0].in_flight,
        levels[levels.len() - 1].in_flight
    );
    let _ = writeln!(
        t,
        "  {:>9}  {:>10} {:>6}  {:>10}  {:>9}  {:>7}",
        "in flight", "req/s", "±95%", "fitted", "p99", "errors"
    );
    for p in &levels {
        let mark = match p.in_flight {
            n if Some(n) == c.cliff_in_flight => "  ← cliff",
            n if Some(n) == c.knee_in_flight && !c.still_rising => "  ← knee",
            n if n == c.most_in_flight_tried && c.still_rising => "  ← still rising",
            n if Some(n) == c.slo_in_flight => "  ← p99 over the SLO",
            _ => "",
        };
        let fitted = c
            .fitted
            .iter()
            .find(|f| f.in_flight == p.in_flight)
            .map_or("".to_string(), |f| fmt_rate(f.throughput_rps));
        let _ = writeln!(
            t,
            "  {:>9}  {:>10} {:>6}  {:>10}  {:>9}  {:>6.1}%{mark}",
            p.in_flight,
            fmt_rate(p.throughput_rps),
            pct(p.throughput_ci95, p.throughput_rps).trim(),
            fitted,
            fmt_duration_us(p.p99_us),
            p.error_rate * 100.0
        );
    }
    if !c.fitted.is_empty() {
        let _ = writeln!(
            t,
            "  (fitted: the non-decreasing curve closest to the points, each weighted by its runs; \
             the knee is read off it)"
        );
    }
    t.push('\n');
}

/// The pool sizes compared with the reference, paired: each size's
/// throughput over the reference's, round by round.
fn comparisons_section(t: &mut String, r: &TuneResult) {
    if r.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        t,
        "Each size against the reference (paired runs, interleaved; within 5% is good):"
    );
    for (i, c) in r.comparisons.iter().enumerate() {
        let n = c.ratios.len().max(1) as f64;
        let mean = c.ratios.iter().sum::<f64>() / n;
        let rounds: Vec<String> = c.ratios.iter().map(|x| format!("{x:.2}")).collect();
        let _ = writeln!(
            t,
            "  {:<8} {}:{:<6} vs {}:{:<6} {:.2}×  ({})",
            match c.phase {
                TunePhase::Confirm => "confirm",
                _ => "search",
            },
            c.family,
            c.pool_size,
            c.family,
            c.reference,
            mean,
            rounds.join(", ")
        );
        if let Some(why) = &c.set_aside {
            let _ = writeln!(t, "           set aside: {why}");
        }
        let next = r.comparisons[i + 1..].iter().find(|d| d.family == c.family);
        if next.is_some_and(|d| d.reference == c.pool_size && d.reference != c.reference) {
            let why = match mean * 0.95 >= 1.0 {
                true => format!(": it carried {mean:.2}× of {}:{}", c.family, c.reference),
                false => String::new(),
            };
            let _ = writeln!(
                t,
                "           from here the reference is {}:{}{why}",
                c.family, c.pool_size
            );
        }
    }
    t.push('\n');
}

/// Throughput per level as block characters.
fn sparkline(levels: &[&TunePoint]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = levels
        .iter()
        .map(|p| p.throughput_rps)
        .fold(0.0, f64::max)
        .max(1e-9);
    levels
        .iter()
        .map(|p| BARS[((p.throughput_rps / max) * 7.0).round().clamp(0.0, 7.0) as usize])
        .collect()
}

/// The pool search and the confirmation, point by point.
fn points_section(t: &mut String, r: &TuneResult) {
    let rows: Vec<&TunePoint> = r
        .points
        .iter()
        .filter(|p| matches!(p.phase, TunePhase::Pool | TunePhase::Confirm))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(t, "Pool search at the client's load:");
    let _ = writeln!(
        t,
        "  {:<8} {:<18} {:>10} {:>6}  {:>9}  {:>7}  {:>5}",
        "phase", "strategy", "req/s", "±95%", "p99", "errors", "runs"
    );
    for p in rows {
        let _ = writeln!(
            t,
            "  {:<8} {:<18} {:>10} {:>6}  {:>9}  {:>6.1}%  {:>5}",
            match p.phase {
                TunePhase::Pool => "search",
                _ => "confirm",
            },
            p.strategy,
            fmt_rate(p.throughput_rps),
            pct(p.throughput_ci95, p.throughput_rps).trim(),
            fmt_duration_us(p.p99_us),
            p.error_rate * 100.0,
            p.runs
        );
    }
    t.push('\n');
}

#[cfg(test)]
mod tests {
    use super::{render_tune_text, threads_line};
    use poolbench_model::{GeneratorThreads, TuneComparison, TuneLoad, TunePhase, TuneResult};

    fn result(threads: usize, one_rps: f64, many_rps: f64) -> TuneResult {
        let mut r = TuneResult::begin(
            "http://x/".into(),
            TuneLoad::Concurrency(64),
            None,
            120.0,
            vec!["pool".into()],
        );
        r.generator_threads = Some(GeneratorThreads {
            threads,
            in_flight: 4,
            one_rps,
            many: 2,
            many_rps,
        });
        r
    }

    #[test]
    fn says_which_load_threads_were_kept_and_why() {
        let one = result(1, 140_000.0, 128_000.0);
        assert_eq!(
            threads_line(&one).unwrap(),
            "Load threads: 1 (at 4 in flight, 2 threads carried 0.91x one thread's 140,000 req/s: a thread more took cores from the service)."
        );
        let two = result(2, 62_000.0, 83_000.0);
        let line = threads_line(&two).unwrap();
        assert!(
            line.starts_with("Load threads: 2 ") && line.contains("1.34x"),
            "{line}"
        );
        assert!(line.ends_with("one thread held the load back)."), "{line}");
        assert!(render_tune_text(&two).contains(&line));
        let mut given = two;
        given.generator_threads = None;
        assert_eq!(threads_line(&given), None);
    }

    #[test]
    fn comparisons_set_aside_say_why() {
        let mut r = result(1, 1.0, 1.0);
        let mk = |ratios: Vec<f64>, set_aside: Option<String>| TuneComparison {
            phase: TunePhase::Pool,
            family: "pool".into(),
            pool_size: 12,
            reference: 64,
            ratios,
            set_aside,
        };
        r.comparisons = vec![
            mk(
                vec![0.72, 0.78],
                Some("the machine moved these rounds".into()),
            ),
            mk(vec![0.96, 0.97], None),
        ];
        let text = render_tune_text(&r);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("(0.72, 0.78)"))
            .unwrap();
        assert_eq!(
            lines[at + 1].trim(),
            "set aside: the machine moved these rounds"
        );
        let next = lines[at + 2];
        assert!(
            next.contains("(0.96, 0.97)") && !text.contains("set aside: None"),
            "{text}"
        );
    }

    #[test]
    fn a_reference_moved_to_the_peak_is_said_with_what_it_carried() {
        let mut r = result(1, 1.0, 1.0);
        let mk = |pool_size: usize, reference: usize, ratios: Vec<f64>| TuneComparison {
            phase: TunePhase::Pool,
            family: "pool".into(),
            pool_size,
            reference,
            ratios,
            set_aside: None,
        };
        r.comparisons = vec![
            mk(32, 100, vec![1.08, 1.10]),
            mk(12, 32, vec![0.96, 0.97]),
            mk(8, 32, vec![0.90, 0.91]),
        ];
        let text = render_tune_text(&r);
        let said = "from here the reference is pool:32: it carried 1.09× of pool:100";
        assert_eq!(text.matches(said).count(), 1, "{text}");
        // Kept at the load: nothing said.
        r.comparisons = vec![mk(32, 100, vec![1.0, 0.99]), mk(12, 100, vec![0.96, 0.97])];
        assert!(!render_tune_text(&r).contains("from here"));
    }
}
