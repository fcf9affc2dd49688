//! Request text with placeholders: `{seq}` and `{random:A..B}`.
use rand::Rng;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Text(Vec<u8>),
    Seq,
    Random(u64, u64),
}

/// Text with `{seq}` and `{random:A..B}` placeholders; any other brace is
/// literal text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

impl Template {
    /// Parse `text`; a `{random:…}` whose range is not `A..B` with A ≤ B
    /// is an error naming it.
    pub(crate) fn parse(text: &[u8]) -> Result<Template, String> {
        let mut t = Template::default();
        let mut rest = text;
        while let Some(open) = rest.iter().position(|&b| b == b'{') {
            let close = rest[open..].iter().position(|&b| b == b'}');
            let Some(close) = close.map(|c| open + c) else {
                break;
            };
            let inner = &rest[open + 1..close];
            let part = if inner == b"seq" {
                Some(Part::Seq)
            } else if let Some(range) = inner.strip_prefix(b"random:") {
                Some(random_range(range)?)
            } else {
                None
            };
            match part {
                Some(part) => {
                    t.text(&rest[..open]);
                    t.parts.push(part);
                }
                None => {
                    // Not a placeholder: the brace is text, and one may
                    // start inside (`{"id": {seq}}`).
                    t.text(&rest[..=open]);
                    rest = &rest[open + 1..];
                    continue;
                }
            }
            rest = &rest[close + 1..];
        }
        t.text(rest);
        Ok(t)
    }

    pub(crate) fn text(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Text(t)) => t.extend_from_slice(bytes),
            _ => self.parts.push(Part::Text(bytes.to_vec())),
        }
    }

    pub(crate) fn append(&mut self, other: &Template) {
        for p in &other.parts {
            match p {
                Part::Text(t) => self.text(t),
                p => self.parts.push(p.clone()),
            }
        }
    }

    /// Nothing varies: the same bytes every time.
    pub(crate) fn is_fixed(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// The text with every placeholder filled, appended to `out`.
    pub(crate) fn render(&self, seq: u64, out: &mut Vec<u8>) {
        for p in &self.parts {
            match p {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Seq => out.extend_from_slice(seq.to_string().as_bytes()),
                Part::Random(lo, hi) => {
                    let n = rand::rng().random_range(*lo..=*hi);
                    out.extend_from_slice(n.to_string().as_bytes());
                }
            }
        }
    }

    pub(crate) fn rendered(&self, seq: u64) -> Vec<u8> {
        let mut out = Vec::new();
        self.render(seq, &mut out);
        out
    }
}

fn random_range(range: &[u8]) -> Result<Part, String> {
    let text = String::from_utf8_lossy(range);
    let bad = || {
        format!(
            "invalid placeholder {{random:{text}}}: expected {{random:A..B}} with integers A <= B"
        )
    };
    let (lo, hi) = text.split_once("..").ok_or_else(bad)?;
    let lo: u64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: u64 = hi.trim().parse().map_err(|_| bad())?;
    if lo > hi {
        return Err(bad());
    }
    Ok(Part::Random(lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_seq_once_per_request_and_random_within_its_range() {
        let t = Template::parse(b"/items/{seq}?r={random:5..7}&again={seq}&{other}").unwrap();
        assert!(!t.is_fixed());
        for seq in [0, 41] {
            let s = String::from_utf8(t.rendered(seq)).unwrap();
            let (path, query) = s.split_once('?').unwrap();
            assert_eq!(path, format!("/items/{seq}"));
            let r: u64 = query[2..3].parse().unwrap();
            assert!((5..=7).contains(&r), "{s}");
            assert!(s.ends_with(&format!("&again={seq}&{{other}}")), "{s}");
        }
        assert!(Template::parse(b"{\"a\": 1}").unwrap().is_fixed());
        let json = Template::parse(b"{\"id\": {seq}, \"n\": {\"m\": {seq}}}").unwrap();
        assert_eq!(json.rendered(3), b"{\"id\": 3, \"n\": {\"m\": 3}}");
        for bad in ["{random:9..1}", "{random:1-9}", "{random:a..b}"] {
            let e = Template::parse(bad.as_bytes()).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }
}
