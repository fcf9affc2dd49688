//! The values of a SQL query's parameters (PostgreSQL's `$1`, `$2`, …,
//! MySQL's `?`), one `--param` each: `random(A,B)` as pgbench's `\set`,
//! or text with `{seq}` and `{random:A..B}`. Each protocol sends the
//! rendered text its own way.
use crate::template::Template;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The parameters of every request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params {
    values: Vec<Template>,
    seq: Arc<AtomicU64>,
}

impl Params {
    pub(crate) fn parse(specs: &[String]) -> Result<Params, String> {
        let mut values = Vec::new();
        for spec in specs {
            let text = match random_call(spec)? {
                Some((lo, hi)) => format!("{{random:{lo}..{hi}}}"),
                None => spec.clone(),
            };
            let t = Template::parse(text.as_bytes()).map_err(|e| format!("--param {spec}: {e}"))?;
            values.push(t);
        }
        Ok(Params {
            values,
            seq: Arc::new(AtomicU64::new(0)),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The same values every time.
    pub(crate) fn is_fixed(&self) -> bool {
        self.values.iter().all(Template::is_fixed)
    }

    /// The next request's values, as text.
    pub(crate) fn next(&self) -> Vec<TextParam> {
        let seq = match self.is_fixed() {
            true => 0,
            false => self.seq.fetch_add(1, Ordering::Relaxed),
        };
        self.values
            .iter()
            .map(|t| TextParam(t.rendered(seq)))
            .collect()
    }
}

/// `random(A,B)`: the bounds; `None` for anything else.
fn random_call(spec: &str) -> Result<Option<(i64, i64)>, String> {
    let Some(args) = spec
        .trim()
        .strip_prefix("random(")
        .and_then(|r| r.strip_suffix(')'))
    else {
        return Ok(None);
    };
    let bad = || format!("--param {spec}: expected random(A,B) with integers A <= B");
    let (lo, hi) = args.split_once(',').ok_or_else(bad)?;
    let lo: i64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: i64 = hi.trim().parse().map_err(|_| bad())?;
    if lo > hi || lo < 0 {
        return Err(bad());
    }
    Ok(Some((lo, hi)))
}

/// A parameter value in text format, for any type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TextParam(pub(crate) Vec<u8>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_randoms_and_templates_render_per_request() {
        let p = Params::parse(&["random(5,5)".into(), "u{seq}".into(), "x".into()]).unwrap();
        assert!(!p.is_fixed());
        let text = |v: Vec<TextParam>| {
            v.into_iter()
                .map(|t| String::from_utf8(t.0).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(text(p.next()), ["5", "u0", "x"]);
        assert_eq!(text(p.next()), ["5", "u1", "x"]);
        assert!(Params::parse(&["random(9,1)".into()]).is_err());
        assert!(Params::parse(&["random(a,1)".into()]).is_err());
        assert!(Params::parse(&["7".into()]).unwrap().is_fixed());
    }
}
