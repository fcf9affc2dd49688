//! `compare --fail-if`: the bounds a significant change must not cross,
//! and the names each kind of result lets them name. Shared by the cell
//! comparison of two runs and the figure comparison of two tunes.

/// The names `--fail-if` knows, by the kind of result compared. A kind of
/// result that gains a comparison adds its row here (and its figures in a
/// file of its own, as `tune_compare.rs` does).
pub const BOUNDABLE: [(&str, &[&str]); 3] = [
    ("run", &["throughput", "p50", "p99", "errors"]),
    (
        "tune",
        &[
            "peak",
            "knee",
            "serves",
            "cliff",
            "pick",
            "throughput",
            "p99",
        ],
    ),
    ("rate", &["rate", "throughput", "p99"]),
];

/// A bound a significant change must not cross: `throughput<-5%` (a drop
/// of more than 5%), `p99>+10%`, `errors>+1` (points), `knee<-10%`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    pub metric: String,
    pub below: bool,
    pub limit: f64,
}

impl Bound {
    /// As written back: `throughput<-5`.
    pub fn written(&self) -> String {
        let op = if self.below { "<" } else { ">" };
        format!("{}{op}{}", self.metric, self.limit)
    }

    /// `change` lies beyond the bound.
    pub fn beyond(&self, change: f64) -> bool {
        match self.below {
            true => change < self.limit,
            false => change > self.limit,
        }
    }
}

/// One `--fail-if` bound checked against one matched cell or figure.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundCheck {
    /// What was checked: the cell (`pool:8 c=16`) or the figure (`knee`).
    pub cell: String,
    /// The bound as written: `throughput<-5`.
    pub bound: String,
    /// The change measured: `throughput -7.2%` (significance noted).
    pub measured: String,
    /// Crossed by a significant change.
    pub crossed: bool,
    /// The crossing in one line, as `violations` gives it.
    pub line: String,
}

/// `throughput<-5%,p99>+10%`: any name some kind of result knows
/// ([`BOUNDABLE`]); [`names_apply`] then checks them against the kind
/// compared.
pub fn parse_bounds(text: &str) -> Result<Vec<Bound>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_one)
        .collect()
}

fn parse_one(s: &str) -> Result<Bound, String> {
    let (metric, below, rest) = match (s.split_once('<'), s.split_once('>')) {
        (Some((m, r)), None) => (m, true, r),
        (None, Some((m, r))) => (m, false, r),
        _ => {
            return Err(format!(
                "--fail-if \"{s}\": expected METRIC<N% or METRIC>N%"
            ))
        }
    };
    let metric = metric.trim();
    if !BOUNDABLE.iter().any(|(_, names)| names.contains(&metric)) {
        let known: Vec<String> = BOUNDABLE
            .iter()
            .map(|(kind, names)| format!("{} ({kind}s)", names.join(", ")))
            .collect();
        return Err(format!(
            "--fail-if \"{s}\": the metric is one of {}",
            known.join("; ")
        ));
    }
    let limit: f64 = rest
        .trim()
        .trim_end_matches('%')
        .trim_start_matches('+')
        .parse()
        .map_err(|_| format!("--fail-if \"{s}\": \"{rest}\" is not a number"))?;
    Ok(Bound {
        metric: metric.to_string(),
        below,
        limit,
    })
}

/// Every bound names something results of `kind` have: the first that
/// does not, said in one line.
pub fn names_apply(bounds: &[Bound], kind: &str) -> Result<(), String> {
    let names = BOUNDABLE
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |(_, n)| *n);
    match bounds.iter().find(|b| !names.contains(&b.metric.as_str())) {
        None => Ok(()),
        Some(b) => Err(format!(
            "--fail-if {}: two {kind} results compare {}",
            b.written(),
            names.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_and_bad_ones_say_why() {
        let b = parse_bounds("throughput<-5%, p99>+10%").unwrap();
        assert_eq!(
            b[0],
            Bound {
                metric: "throughput".into(),
                below: true,
                limit: -5.0
            }
        );
        assert_eq!(
            b[1],
            Bound {
                metric: "p99".into(),
                below: false,
                limit: 10.0
            }
        );
        assert!(parse_bounds("speed<1%").unwrap_err().contains("metric"));
        assert!(parse_bounds("p99=1").is_err());
        assert!(parse_bounds("p99>x%").is_err());
    }

    #[test]
    fn a_bound_must_name_a_figure_of_the_kind_compared() {
        let b = parse_bounds("peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%").unwrap();
        assert_eq!(names_apply(&b, "tune"), Ok(()));
        assert_eq!(
            names_apply(&b, "run").unwrap_err(),
            "--fail-if peak<-10: two run results compare throughput, p50, p99, errors"
        );
        let errors = parse_bounds("errors>+1").unwrap();
        assert!(names_apply(&errors, "tune")
            .unwrap_err()
            .contains("peak, knee, serves, cliff, pick, throughput, p99"));
    }
}
