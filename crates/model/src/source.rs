//! The local addresses outgoing connections are bound to (`--source`):
//! each given as one address, a range `A-B` or a CIDR block `A/N`, and
//! expanded in order. One source address gives a client about 28,000 ports
//! per server address (Linux's default ephemeral range); several give that
//! many each.
use std::net::IpAddr;

/// The most addresses `--source` may name in all.
pub const MAX_SOURCES: usize = 65_536;

/// Every address `specs` names, in the order given; a one-line error for
/// one that does not parse, mixes families, or names too many.
pub fn expand_sources(specs: &[String]) -> Result<Vec<IpAddr>, String> {
    let mut all = Vec::new();
    for spec in specs {
        let (first, count) =
            parse_one(spec.trim()).map_err(|why| format!("--source {spec}: {why}"))?;
        if count > (MAX_SOURCES - all.len()) as u128 {
            return Err(format!(
                "--source {spec}: more than {MAX_SOURCES} source addresses in all"
            ));
        }
        all.extend((0..count).map(|i| offset(first, i)));
    }
    if let Some(other) = all.iter().find(|a| a.is_ipv4() != all[0].is_ipv4()) {
        return Err(format!(
            "--source {other}: IPv4 and IPv6 source addresses mixed"
        ));
    }
    Ok(all)
}

/// The first address of one spec and how many it names.
fn parse_one(spec: &str) -> Result<(IpAddr, u128), String> {
    let ip = |s: &str| {
        s.trim()
            .parse::<IpAddr>()
            .map_err(|_| format!("\"{s}\" is not an IP address"))
    };
    if let Some((a, b)) = spec.split_once('-') {
        let (a, b) = (ip(a)?, ip(b)?);
        if a.is_ipv4() != b.is_ipv4() {
            return Err("a range from one address family to another".into());
        }
        let (lo, hi) = (number(a), number(b));
        if hi < lo {
            return Err("the range ends before it starts".into());
        }
        return Ok((a, hi - lo + 1));
    }
    if let Some((a, bits)) = spec.split_once('/') {
        let a = ip(a)?;
        let width = if a.is_ipv4() { 32 } else { 128 };
        let bits: u32 = bits
            .parse()
            .ok()
            .filter(|b| *b <= width)
            .ok_or_else(|| format!("prefix length \"{bits}\" is not 0..={width}"))?;
        let host_bits = width - bits;
        let mask = if host_bits >= 128 {
            0
        } else {
            u128::MAX << host_bits
        };
        let count = if host_bits >= 128 {
            u128::MAX
        } else {
            1u128 << host_bits
        };
        return Ok((from_number(a, number(a) & mask), count));
    }
    Ok((ip(spec)?, 1))
}

fn number(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(v4) => u32::from(v4) as u128,
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn from_number(family: IpAddr, n: u128) -> IpAddr {
    match family {
        IpAddr::V4(_) => IpAddr::V4((n as u32).into()),
        IpAddr::V6(_) => IpAddr::V6(n.into()),
    }
}

fn offset(first: IpAddr, i: u128) -> IpAddr {
    from_number(first, number(first) + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(specs: &[&str]) -> Result<Vec<String>, String> {
        let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
        expand_sources(&specs).map(|v| v.iter().map(|a| a.to_string()).collect())
    }

    #[test]
    fn addresses_ranges_and_blocks_expand_in_order() {
        assert_eq!(expand(&["127.0.0.2"]).unwrap(), ["127.0.0.2"]);
        assert_eq!(
            expand(&["127.0.0.2-127.0.0.4", "::1"]).unwrap_err(),
            "--source ::1: IPv4 and IPv6 source addresses mixed"
        );
        assert_eq!(
            expand(&["127.0.0.255-127.0.1.1"]).unwrap(),
            ["127.0.0.255", "127.0.1.0", "127.0.1.1"]
        );
        let block = expand(&["127.0.1.7/30"]).unwrap();
        assert_eq!(block, ["127.0.1.4", "127.0.1.5", "127.0.1.6", "127.0.1.7"]);
        assert_eq!(expand(&["127.0.1.0/24"]).unwrap().len(), 256);
        assert_eq!(expand(&["::1/127"]).unwrap(), ["::", "::1"]);
        assert_eq!(expand(&["127.0.0.0/16"]).unwrap().len(), MAX_SOURCES);
    }

    #[test]
    fn bad_sources_say_which_and_why() {
        let err = |s: &[&str]| expand(s).unwrap_err();
        assert_eq!(
            err(&["localhost"]),
            "--source localhost: \"localhost\" is not an IP address"
        );
        assert_eq!(
            err(&["127.0.0.9-127.0.0.2"]),
            "--source 127.0.0.9-127.0.0.2: the range ends before it starts"
        );
        assert!(err(&["127.0.0.1/33"]).contains("prefix length \"33\""));
        assert!(err(&["127.0.0.0/8"]).contains("more than 65536"));
        assert!(err(&["::/0"]).contains("more than 65536"));
        assert!(err(&["127.0.0.0/16", "127.1.0.1"]).contains("more than 65536"));
        assert!(err(&["127.0.0.1-::1"]).contains("one address family to another"));
    }
}
