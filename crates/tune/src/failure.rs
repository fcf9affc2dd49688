//! Why a point fails, by kind: what tune decides on (a service that
//! freezes is waited out and named so; one that errs is not) and what it
//! says, in the words results have always carried.
use poolbench_model::CliffKind;
use std::fmt;

/// Why a point counts as failing.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// No request completed in `seconds`.
    NoAnswer { seconds: f64 },
    /// Errors above the bound: their share, and their count by kind.
    Errors {
        rate: f64,
        kinds: Vec<(String, u64)>,
    },
    /// Nothing succeeded for `seconds` while requests were in flight.
    Stalled { seconds: f64 },
    /// Fewer than half the requests asked for were being answered.
    Unanswered { achieved: f64, asked: usize },
    /// Throughput fell to `share` of the peak without another failure.
    Collapsed { share: f64 },
}

impl Failure {
    /// Whether the service froze (answered nothing, or too little to
    /// round to a percent of its peak) rather than failed with errors or
    /// a partial answer.
    pub fn froze(&self) -> bool {
        match self {
            Failure::NoAnswer { .. } | Failure::Stalled { .. } => true,
            Failure::Collapsed { share } => (share * 100.0).round() == 0.0,
            Failure::Errors { .. } | Failure::Unanswered { .. } => false,
        }
    }

    /// The kind a cliff of this failure is named by.
    pub fn cliff_kind(&self) -> CliffKind {
        match self.froze() {
            true => CliffKind::Freezes,
            false => CliffKind::Fails,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NoAnswer { seconds } => write!(f, "no answer in {seconds:.1} s"),
            Failure::Errors { rate, kinds } => {
                let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
                write!(f, "{:.1}% errors ({})", rate * 100.0, kinds.join(", "))
            }
            Failure::Stalled { seconds } => {
                write!(f, "stalled {seconds:.1} s with requests in flight")
            }
            Failure::Unanswered { achieved, asked } => write!(
                f,
                "only {achieved:.1} of {asked} requests in flight were being answered"
            ),
            Failure::Collapsed { share } => write!(
                f,
                "throughput collapsed to {:.0}% of its peak",
                100.0 * share
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Failure;

    #[test]
    fn a_freeze_is_told_from_a_failure_by_kind_not_by_its_words() {
        let froze = [
            Failure::NoAnswer { seconds: 2.0 },
            Failure::Stalled { seconds: 0.7 },
            Failure::Collapsed { share: 0.004 },
        ];
        assert!(froze.iter().all(Failure::froze));
        let failed = [
            Failure::Errors {
                rate: 0.5,
                kinds: vec![("timeout".into(), 3)],
            },
            Failure::Unanswered {
                achieved: 1.5,
                asked: 8,
            },
            Failure::Collapsed { share: 0.25 },
        ];
        assert!(!failed.iter().any(Failure::froze));
        assert_eq!(failed[0].to_string(), "50.0% errors (3 timeout)");
        assert_eq!(
            froze[2].to_string(),
            "throughput collapsed to 0% of its peak"
        );
    }
}
